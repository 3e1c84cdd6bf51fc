import type { Db } from "../../../server/db";
import type { MemorySeries } from "./schemas";

/**
 * Memory timelines for charts and the per-phase peaks table, read from MemoryRollup (kept by a trigger
 * on MemorySample, migration memory_rollups) instead of scanning every sample: a 300,000-sample run
 * reads a few thousand rows. Every value is the highest of what it covers (memory peaks matter more
 * than averages), so bucketing never hides the sample an OOM came from.
 */

/** Rollup blocks are 2^level steps, level 4..20, as in the `troupe_memory_rollup` trigger (migration memory_rollup_pow2_levels). */
const FINEST_LEVEL = 4;
/** The coarsest level: blocks of 2^20 steps, so its rows are each series' summary (a few rows even on a long run). */
export const MEMORY_SUMMARY_LEVEL = 20;

/** One (device, actor, phase) series: how many samples, its step range and its highest values. */
export interface MemorySummary {
  device: string;
  actor: string;
  phase: string;
  samples: number;
  firstStep: number;
  lastStep: number;
  rssBytes: number | null;
  allocatedBytes: number | null;
  reservedBytes: number | null;
  peakBytes: number | null;
  /** First step at which the series' highest coalesce(peak, allocated, RSS) was reached. */
  atStep: number;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * Every memory series of a run (of one device when given), from the coarsest rollup level: a handful
 * of rows per series, whatever the run's length. Ordered by device, actor, phase.
 */
export async function loadMemorySummaries(db: Db, runId: string, device?: string): Promise<MemorySummary[]> {
  const rows = await db.$queryRaw<Record<string, unknown>[]>`
    SELECT device, actor, phase, sum(count)::int AS samples, min("firstStep")::int AS "firstStep", max("lastStep")::int AS "lastStep",
      max("rssBytes")::float8 AS "rssBytes", max("allocatedBytes")::float8 AS "allocatedBytes",
      max("reservedBytes")::float8 AS "reservedBytes", max("peakBytes")::float8 AS "peakBytes",
      (array_agg("topStep" ORDER BY "topBytes" DESC NULLS LAST, "topStep"))[1]::int AS "atStep"
    FROM "MemoryRollup"
    WHERE "runId" = ${runId} AND level = ${MEMORY_SUMMARY_LEVEL}::int AND (${device ?? null}::text IS NULL OR device = ${device ?? null}::text)
    GROUP BY device, actor, phase
    ORDER BY device, actor, phase`;
  return rows.map((r) => ({
    device: String(r.device),
    actor: String(r.actor),
    phase: String(r.phase),
    samples: Number(r.samples),
    firstStep: Number(r.firstStep),
    lastStep: Number(r.lastStep),
    rssBytes: num(r.rssBytes),
    allocatedBytes: num(r.allocatedBytes),
    reservedBytes: num(r.reservedBytes),
    peakBytes: num(r.peakBytes),
    atStep: Number(r.atStep),
  }));
}

/**
 * The bucket width for a series over steps [lo, hi] in at most `maxPoints` points: the smallest power
 * of two whose aligned blocks (floor(step / width)) touching the range are no more than `maxPoints`.
 * Buckets are then whole rollup blocks of level log2(width), one row each.
 */
export function memoryBucketWidth(lo: number, hi: number, maxPoints: number): number {
  let width = 1;
  while (Math.floor(hi / width) - Math.floor(lo / width) + 1 > maxPoints) width *= 2;
  return width;
}

/**
 * The rollup level to read for buckets of `width` steps: log2(width), or 0 (the samples themselves)
 * below the finest level; capped at the coarsest, whose blocks are then grouped (a run of more than
 * 2^20 × maxPoints steps).
 */
export function memoryRollupLevel(width: number): number {
  const level = Math.log2(width);
  return level < FINEST_LEVEL ? 0 : Math.min(level, MEMORY_SUMMARY_LEVEL);
}

/** How one series is read: raw samples (not bucketed), or buckets of `width` steps from rollup `level` (0: from the samples). */
interface SeriesPlan {
  summary: MemorySummary;
  bucketed: boolean;
  width: number;
  level: number;
}

function planSeries(summary: MemorySummary, maxPoints: number): SeriesPlan {
  if (summary.samples <= maxPoints) return { summary, bucketed: false, width: 1, level: 0 };
  const width = memoryBucketWidth(summary.firstStep, summary.lastStep, maxPoints);
  return { summary, bucketed: true, width, level: memoryRollupLevel(width) };
}

/**
 * The memory series of a run (of one device when given), one per (device, phase, actor). A series with
 * at most `maxPoints` samples comes back raw; a longer one in at most `maxPoints` buckets of a
 * power-of-two step width (`memoryBucketWidth`), each holding the highest value of every column, its
 * highest step and its highest seq. One statement for all series: per series one index range scan of
 * one rollup level (or of its samples), each series' points returned as one JSON text of columns
 * [steps, seqs, rss, allocated, reserved, peak], which decodes far faster than a row per point.
 */
export async function loadMemorySeries(db: Db, runId: string, device: string | undefined, maxPoints: number): Promise<MemorySeries[]> {
  const plans = (await loadMemorySummaries(db, runId, device)).map((s) => planSeries(s, maxPoints));
  if (plans.length === 0) return [];
  const col = <T>(f: (p: SeriesPlan) => T) => plans.map(f);
  const rows = await db.$queryRaw<{ i: number; columns: string }[]>`
    WITH s AS (
      SELECT * FROM unnest(${col((p) => p.summary.device)}::text[], ${col((p) => p.summary.actor)}::text[], ${col((p) => p.summary.phase)}::text[],
        ${col((p) => p.level)}::int[], ${col((p) => p.width)}::int[], ${col((p) => p.bucketed)}::bool[]) WITH ORDINALITY
        AS s(device, actor, phase, level, width, bucketed, i)
    ),
    -- OFFSET 0 keeps each lateral read a per-series index scan (pulled up, Postgres may hash the run's samples).
    parts AS (
      SELECT s.i, s.width, s.bucketed, r."firstStep" AS s0, r."lastStep" AS s1, r."lastSeq" AS seq, r.count AS n,
             r."rssBytes" AS rss, r."allocatedBytes" AS alloc, r."reservedBytes" AS reserved, r."peakBytes" AS peak
      FROM s CROSS JOIN LATERAL (
        SELECT * FROM "MemoryRollup" r
        WHERE r."runId" = ${runId} AND r.level = s.level AND r.device = s.device AND r.actor = s.actor AND r.phase = s.phase OFFSET 0) r
      WHERE s.level > 0
      UNION ALL
      SELECT s.i, s.width, s.bucketed, m.step, m.step, m.seq, 1, m."rssBytes", m."allocatedBytes", m."reservedBytes", m."peakBytes"
      FROM s CROSS JOIN LATERAL (
        SELECT * FROM "MemorySample" m
        WHERE m."runId" = ${runId} AND m.device = s.device AND m.actor = s.actor AND m.phase = s.phase OFFSET 0) m
      WHERE s.level = 0
    ),
    b AS (
      SELECT i, max(s1) AS step, max(seq) AS seq, max(rss) AS rss, max(alloc) AS alloc, max(reserved) AS reserved, max(peak) AS peak
      FROM parts
      GROUP BY i, CASE WHEN bucketed THEN s0 / width ELSE seq END
    )
    SELECT i::int AS i, json_build_array(array_agg(step ORDER BY step, seq), array_agg(seq ORDER BY step, seq), array_agg(rss ORDER BY step, seq),
             array_agg(alloc ORDER BY step, seq), array_agg(reserved ORDER BY step, seq), array_agg(peak ORDER BY step, seq))::text AS columns
    FROM b GROUP BY i`;

  const points = new Map<number, MemorySeries["points"]>();
  for (const r of rows) {
    const [step, seq, rss, alloc, reserved, peak] = JSON.parse(r.columns) as (number | null)[][];
    points.set(
      Number(r.i),
      step!.map((st, j) => ({
        step: Number(st),
        seq: Number(seq![j]),
        rssBytes: num(rss![j]),
        allocatedBytes: num(alloc![j]),
        reservedBytes: num(reserved![j]),
        peakBytes: num(peak![j]),
      })),
    );
  }
  return plans
    .map(({ summary: s, bucketed }, i) => ({
      device: s.device,
      phase: s.phase,
      actor: s.actor,
      total: s.samples,
      bucketed,
      points: points.get(i + 1) ?? [],
    }))
    .sort((a, b) => cmp(a.device, b.device) || cmp(a.phase, b.phase) || cmp(a.actor, b.actor));
}

/** Plain code-unit order: device, then phase, then actor (the order the chart legend lists them in). */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
