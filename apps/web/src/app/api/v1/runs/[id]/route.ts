export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { getRun as GET } from "../../../../../features/api/server/handlers";
