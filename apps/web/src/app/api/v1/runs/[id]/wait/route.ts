export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { waitRun as GET } from "../../../../../../features/api/server/handlers";
