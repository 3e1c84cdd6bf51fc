export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { listRunAdvisories as GET } from "../../../../../../features/advisories/server/rest";
