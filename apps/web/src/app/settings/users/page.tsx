import { redirect } from "next/navigation";
import { UsersPage } from "../../../features/auth/components/UsersPage";
import { currentRequestAuth } from "../../../server/api/context";

export const metadata = { title: "Users — Troupe" };

export default async function UsersRoute() {
  // The procedures refuse non-admins anyway; this spares them a page of errors.
  const auth = await currentRequestAuth();
  if (!auth) redirect("/sign-in?next=/settings/users");
  if (auth.user.role !== "admin") return <p className="form-error">Only administrators manage users (you are {auth.user.role}).</p>;
  return <UsersPage />;
}
