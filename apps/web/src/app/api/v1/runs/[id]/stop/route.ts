export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { stopRunHandler as POST } from "../../../../../../features/api/server/handlers";
