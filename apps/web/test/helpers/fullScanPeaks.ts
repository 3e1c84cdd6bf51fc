import type { Db } from "@troupe/db";

/**
 * The memory peaks query the rollups replaced: a full scan of the run's samples, one row per device,
 * actor and phase. The rollup test's oracle and the memory benchmark's baseline.
 */
export async function fullScanPeaks(db: Db, runId: string): Promise<Record<string, unknown>[]> {
  const rows = await db.$queryRaw<Record<string, unknown>[]>`
    SELECT device, actor, phase, count(*)::int AS samples,
      max("rssBytes")::float8 AS "rssBytes", max("allocatedBytes")::float8 AS "allocatedBytes",
      max("reservedBytes")::float8 AS "reservedBytes", max("peakBytes")::float8 AS "peakBytes",
      (array_agg(step ORDER BY coalesce("peakBytes", "allocatedBytes", "rssBytes") DESC NULLS LAST, step))[1]::int AS "atStep",
      max(step)::int AS "lastStep"
    FROM "MemorySample" WHERE "runId" = ${runId}
    GROUP BY device, actor, phase
    ORDER BY device, actor, phase`;
  // Counts and bytes as numbers (the driver may hand back bigint or numeric as strings).
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" || v === null ? v : Number(v)])));
}
