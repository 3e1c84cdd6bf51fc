export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { resumeRunHandler as POST } from "../../../../../../features/api/server/handlers";
