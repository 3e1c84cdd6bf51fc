import { redirect } from "next/navigation";
import { SignInForm } from "../../features/auth/components/SignInForm";
import { safeNextPath } from "../../features/auth/server/authRoutes";
import { currentRequestAuth } from "../../server/api/context";

export const metadata = { title: "Sign in — Troupe" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function SignInRoute(props: { searchParams: Promise<SearchParams> }) {
  const search = await props.searchParams;
  const next = safeNextPath(typeof search.next === "string" ? search.next : "/");
  // Already signed in (e.g. the back button): go on.
  const auth = await currentRequestAuth().catch(() => null);
  if (auth) redirect(next);
  return <SignInForm next={next} error={typeof search.error === "string" ? search.error : null} />;
}
