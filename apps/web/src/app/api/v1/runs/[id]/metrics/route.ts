export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { getRunMetrics as GET } from "../../../../../../features/api/server/handlers";
