import type { Db } from "../../../server/db";
import { shapeEloRatings, type EloMetricRow, type RunEloOutput } from "../lib/eloRatings";

/** Every `elo/…` point of a run (a few per checkpoint), shaped per game environment (lib/eloRatings.ts). */
export async function loadEloRatings(db: Db, runId: string): Promise<RunEloOutput> {
  const rows = await db.$queryRaw<EloMetricRow[]>`
    SELECT name, actor, step, value FROM "MetricPoint"
    WHERE "runId" = ${runId} AND name LIKE 'elo/%'
    ORDER BY step`;
  return { pools: shapeEloRatings(rows.map((r) => ({ name: r.name, actor: r.actor, step: Number(r.step), value: Number(r.value) }))) };
}
