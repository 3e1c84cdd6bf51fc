import { AcceptInviteForm } from "../../../features/auth/components/AcceptInviteForm";
import { findInvite } from "../../../features/auth/server/users";
import { getDb } from "../../../server/db";

export const metadata = { title: "Accept invitation — Troupe" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function InviteRoute(props: { params: Promise<{ secret: string }>; searchParams: Promise<SearchParams> }) {
  const { secret } = await props.params;
  const search = await props.searchParams;
  const invite = await findInvite(getDb(), secret);
  return <AcceptInviteForm secret={secret} invite={invite} error={typeof search.error === "string" ? search.error : null} />;
}
