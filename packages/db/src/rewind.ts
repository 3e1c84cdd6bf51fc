import type { EventStoreDb } from "./events/dbClient";

/** Rollup levels and block widths, as in the `troupe_metric_rollup` trigger (migration metric_rollups). */
const ROLLUP_LEVELS = "(VALUES (1, 16), (2, 256), (3, 4096), (4, 65536), (5, 1048576))";
/** Memory rollup blocks are 2^level steps, level 4..20, as in the `troupe_memory_rollup` trigger. */
const MEMORY_ROLLUP_LEVELS = "generate_series(4, 20)";

/**
 * Forgets everything a run recorded for steps after `step`, before it resumes from its checkpoint
 * of that step: metric points and memory samples (and the rollup blocks they touched, rebuilt from
 * what remains), episodes, offload moves, and their events. So charts never show two values for one step: the
 * resumed attempt writes those steps again. Status, log and error events stay (the run's history).
 * One transaction; returns how many metric points were removed.
 */
export async function rewindRunAfterStep(db: EventStoreDb, runId: string, step: number): Promise<{ metricPoints: number }> {
  const [, , , , , , removed] = await db.$transaction([
    db.$executeRaw`DELETE FROM "RunEvent" WHERE "runId" = ${runId} AND "type" IN ('metric', 'memory', 'episode', 'checkpoint', 'offload')
      AND ("payload"->>'step')::int > ${step}`,
    db.memorySample.deleteMany({ where: { runId, step: { gt: step } } }),
    db.memoryRollup.deleteMany({ where: { runId, lastStep: { gt: step } } }),
    // As for metrics: the memory block holding `step` at each level is rebuilt from what is left.
    db.$executeRawUnsafe(
      `INSERT INTO "MemoryRollup" ("runId", "level", "device", "actor", "phase", "bucket", "firstStep", "lastStep", "lastSeq", "count",
                                   "rssBytes", "allocatedBytes", "reservedBytes", "peakBytes", "topBytes", "topStep")
       SELECT m."runId", l.level, m."device", m."actor", m."phase", m."step" >> l.level, min(m."step"), max(m."step"), max(m."seq"), count(*)::int,
              max(m."rssBytes"), max(m."allocatedBytes"), max(m."reservedBytes"), max(m."peakBytes"),
              max(coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes")),
              (array_agg(m."step" ORDER BY coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes") DESC NULLS LAST, m."step"))[1]
       FROM "MemorySample" m CROSS JOIN ${MEMORY_ROLLUP_LEVELS} AS l(level)
       WHERE m."runId" = $1 AND m."step" >> l.level = $2::int >> l.level
       GROUP BY m."runId", l.level, m."device", m."actor", m."phase", m."step" >> l.level
       ON CONFLICT ("runId", "level", "device", "actor", "phase", "bucket") DO NOTHING`,
      runId,
      step,
    ),
    db.episode.deleteMany({ where: { runId, step: { gt: step } } }),
    db.metricRollup.deleteMany({ where: { runId, lastStep: { gt: step } } }),
    db.metricPoint.deleteMany({ where: { runId, step: { gt: step } } }),
    // The bucket holding `step` at each level lost its later points: rebuild it from what is left.
    db.$executeRawUnsafe(
      `INSERT INTO "MetricRollup" ("runId", "name", "actor", "level", "bucket", "firstStep", "lastStep", "lastValue", "minValue", "maxValue", "count", "lastTs")
       SELECT p."runId", p."name", p."actor", l.level, p."step" / l.width, min(p."step"), max(p."step"),
              (array_agg(p."value" ORDER BY p."step" DESC))[1], min(p."value"), max(p."value"), count(*)::int,
              (array_agg(p."ts" ORDER BY p."step" DESC))[1]
       FROM "MetricPoint" p CROSS JOIN ${ROLLUP_LEVELS} AS l(level, width)
       WHERE p."runId" = $1 AND p."step" / l.width = $2::int / l.width
       GROUP BY p."runId", p."name", p."actor", l.level, p."step" / l.width
       ON CONFLICT ("runId", "name", "actor", "level", "bucket") DO NOTHING`,
      runId,
      step,
    ),
    db.run.update({ where: { id: runId }, data: { lastStep: step } }),
  ]);
  return { metricPoints: (removed as { count: number }).count };
}
