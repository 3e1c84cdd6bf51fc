export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { uploadDataset as POST } from "../../../../features/api/server/handlers";
