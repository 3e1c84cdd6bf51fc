export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { getRun as GET, deleteRunHandler as DELETE } from "../../../../../features/api/server/handlers";
