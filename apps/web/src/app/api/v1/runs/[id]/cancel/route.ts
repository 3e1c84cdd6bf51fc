export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { cancelRunHandler as POST } from "../../../../../../features/api/server/handlers";
