import { Prisma } from "@troupe/db";
import type { Db } from "../../../server/db";
import type { MetricSeries } from "./schemas";

// Memory series are read from their own rollups; kept importable from here for existing callers.
export { loadMemorySeries } from "./memorySeries";

/**
 * Metric series for charts. A series longer than `maxPoints` is bucketed in SQL over its
 * step range (same formula as `lib/buckets.ts`), so a million-step run still sends ~1000 points.
 */

/** One (name, actor) series of a run and its step range. */
export interface SeriesKey {
  name: string;
  actor: string;
  firstStep: number;
  lastStep: number;
}

/**
 * The distinct (name, actor) series of a run, with their step ranges. A skip scan of the primary key
 * (runId, name, actor, step): one index probe per series, so it stays fast on a run with 20M points
 * (a plain DISTINCT would read them all).
 */
export async function listMetricSeriesKeys(db: Db, runId: string): Promise<SeriesKey[]> {
  const rows = await db.$queryRaw<{ name: string; actor: string; firstStep: number; lastStep: number }[]>`
    WITH RECURSIVE s AS (
      (SELECT name, actor FROM "MetricPoint" WHERE "runId" = ${runId} ORDER BY name, actor LIMIT 1)
      UNION ALL
      SELECT n.name, n.actor FROM s, LATERAL (
        SELECT name, actor FROM "MetricPoint"
        WHERE "runId" = ${runId} AND (name, actor) > (s.name, s.actor)
        ORDER BY name, actor LIMIT 1) n
    )
    SELECT s.name, s.actor,
      (SELECT min(step) FROM "MetricPoint" m WHERE m."runId" = ${runId} AND m.name = s.name AND m.actor = s.actor)::int AS "firstStep",
      (SELECT max(step) FROM "MetricPoint" m WHERE m."runId" = ${runId} AND m.name = s.name AND m.actor = s.actor)::int AS "lastStep"
    FROM s ORDER BY s.name, s.actor`;
  return rows.map((r) => ({ name: r.name, actor: r.actor, firstStep: Number(r.firstStep), lastStep: Number(r.lastStep) }));
}

export interface SeriesWindow {
  /** Only steps >= fromStep (a zoomed chart). */
  fromStep?: number;
  /** Only steps <= toStep. */
  toStep?: number;
  /** Only these actors ("" = not per actor). */
  actors?: string[];
  /** Add each point's time (of its last step), for a time x-axis. */
  withTime?: boolean;
}

interface BucketRow {
  step: number;
  value: number;
  min: number;
  max: number;
  n: number;
  ts: Date;
}

/**
 * One series over [lo, hi], cut into at most `maxPoints` equal step ranges (same formula as
 * `lib/buckets.ts`): per bucket min, max and the last value (at its highest step). Short ranges come
 * back raw. The last value is found by an index probe per bucket rather than an ordered aggregate,
 * which keeps a 1M-point series in tens of milliseconds.
 *
 * The statement read from the points is written so that its plan does not depend on planner statistics: on a table
 * never analysed (autovacuum off) Postgres guesses one row per side and, for a plain join of the
 * buckets to the points, re-ran the bucket aggregate for every point (7 s for one 2,500-step
 * series). A LATERAL probe that cannot be pulled up into a join (OFFSET 0, the buckets MATERIALIZED)
 * is one primary-key lookup per bucket whatever the estimates.
 */
export async function loadBucketedSeries(
  db: Db,
  runId: string,
  key: { name: string; actor: string },
  lo: number,
  hi: number,
  maxPoints: number,
  withTime = false,
): Promise<MetricSeries> {
  const { name, actor } = key;
  // Epoch ms, not Date: a page load carries thousands, and each Date costs superjson a metadata path.
  const time = (ts: Date) => (withTime ? { ts: ts.getTime() } : {});
  if (hi - lo + 1 <= maxPoints) {
    // Steps are unique per series, so a range this short holds at most maxPoints points.
    const rows = await db.metricPoint.findMany({
      where: { runId, name, actor, step: { gte: lo, lte: hi } },
      orderBy: { step: "asc" },
      select: { step: true, value: true, ts: true },
    });
    return {
      name,
      actor,
      total: rows.length,
      bucketed: false,
      points: rows.map((r) => ({ step: r.step, value: r.value, min: r.value, max: r.value, ...time(r.ts) })),
    };
  }
  const level = rollupLevel(hi - lo + 1, maxPoints);
  const rows =
    level === null
      ? await db.$queryRaw<BucketRow[]>(pointBucketsSql(runId, key, lo, hi, maxPoints))
      : await rollupBuckets(db, runId, key, lo, hi, maxPoints, level);
  const points = rows.map((r) => ({ step: Number(r.step), value: Number(r.value), min: Number(r.min), max: Number(r.max), ...time(r.ts) }));
  const total = rows.reduce((n, r) => n + Number(r.n), 0);
  return { name, actor, total, bucketed: total > points.length, points };
}

/** The statement of `loadBucketedSeries` for a range read from the points (exported for the plan test). */
export function pointBucketsSql(runId: string, key: { name: string; actor: string }, lo: number, hi: number, maxPoints: number): Prisma.Sql {
  const { name, actor } = key;
  return Prisma.sql`
    WITH b AS MATERIALIZED (
      SELECT max(step) AS step, min(value) AS min, max(value) AS max, count(*)::int AS n
      FROM "MetricPoint"
      WHERE "runId" = ${runId} AND name = ${name} AND actor = ${actor} AND step BETWEEN ${lo}::int AND ${hi}::int
      GROUP BY floor(((step - ${lo}::int)::float8 * ${maxPoints}::int) / (${hi}::int - ${lo}::int + 1))
    )
    SELECT b.step, m.value, b.min, b.max, b.n, m.ts
    FROM b CROSS JOIN LATERAL (
      SELECT value, ts FROM "MetricPoint" m
      WHERE m."runId" = ${runId} AND m.name = ${name} AND m.actor = ${actor} AND m.step = b.step OFFSET 0) m
    ORDER BY b.step`;
}

/** Below this many steps a range is bucketed from the points themselves (an index range scan). */
export const ROLLUP_MIN_RANGE = 50_000;

/**
 * The MetricRollup level to read for `range` steps in `maxPoints` buckets: the coarsest whose blocks
 * (16^level steps) still fit in one output bucket, so each bucket is made of whole blocks. Null: read
 * the points (short ranges, where that is already fast and exact).
 */
export function rollupLevel(range: number, maxPoints: number): number | null {
  if (range < ROLLUP_MIN_RANGE) return null;
  let level: number | null = null;
  for (let l = 1; l <= 5; l++) if (16 ** l <= range / maxPoints) level = l;
  return level;
}

/**
 * Buckets from rollup blocks: the blocks wholly inside [lo, hi], plus the points of the partial blocks
 * at either end, grouped into `maxPoints` buckets by where each block starts. Min and max come from
 * every point (spikes survive); the last value is the one at the bucket's highest step, found by
 * joining back to the part that ends the bucket (a step is in one part only) rather than by two
 * ordered aggregates per bucket (its plan on tables never analysed is checked by
 * series.unanalysed.int.test.ts: the materialized parts are read once). The buckets come back as one
 * JSON text of columns
 * [steps, values, mins, maxes, counts, epoch ms]: decoding 1000 rows of 6 values through the client
 * cost more than the query itself (series.bench.ts).
 */
async function rollupBuckets(
  db: Db,
  runId: string,
  key: { name: string; actor: string },
  lo: number,
  hi: number,
  maxPoints: number,
  level: number,
): Promise<BucketRow[]> {
  const [row] = await db.$queryRaw<{ columns: string | null }[]>(rollupBucketsSql(runId, key, lo, hi, maxPoints, level));
  if (!row?.columns) return [];
  const [step, value, min, max, n, ts] = JSON.parse(row.columns) as number[][];
  return step!.map((_, j) => ({
    step: step![j]!,
    value: Number(value![j]),
    min: Number(min![j]),
    max: Number(max![j]),
    n: n![j]!,
    ts: new Date(ts![j]!),
  }));
}

/** The statement of `rollupBuckets` (exported for the plan test): one row, the buckets as JSON columns. */
export function rollupBucketsSql(runId: string, key: { name: string; actor: string }, lo: number, hi: number, maxPoints: number, level: number): Prisma.Sql {
  const { name, actor } = key;
  const width = 16 ** level;
  const firstBlock = Math.ceil(lo / width);
  const lastBlock = Math.floor((hi + 1) / width) - 1;
  const innerLo = firstBlock * width;
  const innerHi = (lastBlock + 1) * width - 1;
  const range = hi - lo + 1;
  return Prisma.sql`
    WITH parts AS MATERIALIZED (
      SELECT "firstStep" AS s0, "lastStep" AS s1, "lastValue" AS v, "minValue" AS mn, "maxValue" AS mx, count AS n, "lastTs" AS ts
      FROM "MetricRollup"
      WHERE "runId" = ${runId} AND name = ${name} AND actor = ${actor} AND level = ${level}::int
        AND bucket BETWEEN ${firstBlock}::int AND ${lastBlock}::int
      UNION ALL
      SELECT step, step, value, value, value, 1, ts
      FROM "MetricPoint"
      WHERE "runId" = ${runId} AND name = ${name} AND actor = ${actor}
        AND (step BETWEEN ${lo}::int AND ${innerLo - 1}::int OR step BETWEEN ${innerHi + 1}::int AND ${hi}::int)
    ),
    b AS (
      SELECT max(s1) AS step, min(mn) AS min, max(mx) AS max, sum(n)::int AS n
      FROM parts
      GROUP BY floor(((s0 - ${lo}::int)::float8 * ${maxPoints}::int) / ${range}::int)
    )
    SELECT json_build_array(array_agg(b.step ORDER BY b.step), array_agg(p.v ORDER BY b.step), array_agg(b.min ORDER BY b.step),
             array_agg(b.max ORDER BY b.step), array_agg(b.n ORDER BY b.step),
             array_agg(floor(extract(epoch FROM p.ts) * 1000)::bigint ORDER BY b.step))::text AS columns
    FROM b JOIN parts p ON p.s1 = b.step`;
}

/**
 * Metric series of a run for charts, each bucketed to `maxPoints` (the chart's pixel width) over the
 * whole series or the window asked for, so a million-step run still sends ~1000 points per series.
 * One statement per series, run side by side: one statement for all 20 series of a page measured
 * slower (one core does all the aggregation) than 20 statements on the pool's connections.
 */
export async function loadMetricSeries(
  db: Db,
  runId: string,
  names: string[],
  maxPoints: number,
  window: SeriesWindow = {},
): Promise<MetricSeries[]> {
  const wanted = new Set(names);
  const keys = (await listMetricSeriesKeys(db, runId)).filter(
    (k) => wanted.has(k.name) && (window.actors === undefined || window.actors.includes(k.actor)),
  );
  const series = await Promise.all(
    keys.map((k) => {
      const lo = Math.max(k.firstStep, window.fromStep ?? k.firstStep);
      const hi = Math.min(k.lastStep, window.toStep ?? k.lastStep);
      if (lo > hi) return { name: k.name, actor: k.actor, total: 0, bucketed: false, points: [] } satisfies MetricSeries;
      return loadBucketedSeries(db, runId, k, lo, hi, maxPoints, window.withTime);
    }),
  );
  return series.filter((s) => s.total > 0);
}
