export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { pauseRunHandler as POST } from "../../../../../../features/api/server/handlers";
