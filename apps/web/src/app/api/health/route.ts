import { checkHealth } from "../../../features/health/server/health";
import { getDb } from "../../../server/db";
import { getRedis } from "../../../server/redis";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** 200 when Postgres and Redis answer, 503 otherwise; the body says which check failed. */
export async function GET() {
  const report = await checkHealth(getDb(), getRedis());
  return Response.json(report, { status: report.status === "ok" ? 200 : 503, headers: { "cache-control": "no-store" } });
}
