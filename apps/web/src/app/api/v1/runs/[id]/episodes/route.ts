export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export { listRunEpisodes as GET } from "../../../../../../features/api/server/handlers";
