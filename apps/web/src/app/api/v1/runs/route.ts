export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { listRuns as GET, createRun as POST } from "../../../../features/api/server/handlers";
