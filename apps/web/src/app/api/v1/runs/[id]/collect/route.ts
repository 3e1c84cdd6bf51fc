export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { collectRunHandler as POST } from "../../../../../../features/api/server/handlers";
