export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { getHealth as GET } from "../../../../features/api/server/handlers";
