/**
 * Benchmark: bucketed metric series vs the raw series, on a run with 20 series × 1,000,000 points.
 *
 *   DATABASE_URL=… npx tsx bench/web/series.bench.ts [--points 1000000] [--repeats 7]
 *
 * Seeds the run once (generate_series in SQL; reused on later runs), then times, in this same
 * process and database: the page-load query (all 20 series bucketed to 1000 points), one series
 * bucketed to 1000 and to a chart's 1600 pixels, a zoomed window, the series discovery query, the
 * previous bucketing query (ordered aggregate) and the raw query of one series. Prints medians and
 * each one's ratio against the raw query.
 */
import { listMetricSeriesKeys, loadBucketedSeries, loadMetricSeries } from "../../apps/web/src/features/runs/server/series";
import { benchSeries, openBenchRun } from "./seed";
import { ratioTable, timeMedian } from "./timing";

const { db, points, repeats, runId } = await openBenchRun(5);

const time = (label: string, fn: () => Promise<number>) => timeMedian(label, repeats, fn);

const one = benchSeries()[0]!;
const names = [...new Set(benchSeries().map((s) => s.name))];
const results = [
  await time("discover series (skip scan)", async () => (await listMetricSeriesKeys(db, runId)).length),
  await time("1 series bucketed to 1000", async () => (await loadBucketedSeries(db, runId, one, 1, points, 1000)).points.length),
  await time("1 series bucketed to 1600 px", async () => (await loadBucketedSeries(db, runId, one, 1, points, 1600)).points.length),
  await time("1 series zoomed 10% to 1000", async () =>
    (await loadBucketedSeries(db, runId, one, Math.floor(points * 0.45), Math.floor(points * 0.55), 1000)).points.length),
  await time("20 series bucketed (page load)", async () =>
    (await loadMetricSeries(db, runId, names, 1000)).reduce((n, s) => n + s.points.length, 0)),
  await time("20 series bucketed, previous rollup query (a row per point, ordered aggregates)", async () => {
    // What loadMetricSeries ran before the columns-as-JSON rollup query: same blocks, same buckets.
    const keys = await listMetricSeriesKeys(db, runId);
    const rows = await Promise.all(keys.map((k) => db.$queryRaw<unknown[]>`
      WITH parts AS (
        SELECT "firstStep" AS s0, "lastStep" AS s1, "lastValue" AS v, "minValue" AS mn, "maxValue" AS mx, count AS n, "lastTs" AS ts
        FROM "MetricRollup" WHERE "runId" = ${runId} AND name = ${k.name} AND actor = ${k.actor} AND level = 2 AND bucket BETWEEN 1 AND ${Math.floor((k.lastStep + 1) / 256) - 1}::int
        UNION ALL
        SELECT step, step, value, value, value, 1, ts FROM "MetricPoint"
        WHERE "runId" = ${runId} AND name = ${k.name} AND actor = ${k.actor} AND (step BETWEEN 1 AND 255 OR step BETWEEN ${Math.floor((k.lastStep + 1) / 256) * 256}::int AND ${k.lastStep}::int))
      SELECT max(s1)::int AS step, (array_agg(v ORDER BY s1 DESC))[1] AS value, min(mn) AS min, max(mx) AS max, sum(n)::int AS n, (array_agg(ts ORDER BY s1 DESC))[1] AS ts
      FROM parts GROUP BY floor(((s0 - 1)::float8 * 1000) / ${k.lastStep}::int) ORDER BY 1`));
    return rows.reduce((n, r) => n + r.length, 0);
  }),
  await time("1 series, old ordered-aggregate bucketing", async () =>
    (
      await db.$queryRaw<unknown[]>`
        SELECT max(step)::int AS step, (array_agg(value ORDER BY step DESC))[1] AS value, min(value) AS min, max(value) AS max
        FROM "MetricPoint" WHERE "runId" = ${runId} AND name = ${one.name} AND actor = ${one.actor}
        GROUP BY floor(((step - 1)::float8 * 1000) / ${points}::int) ORDER BY 1`
    ).length),
  await time("1 series raw (baseline)", async () =>
    (await db.metricPoint.findMany({ where: { runId, name: one.name, actor: one.actor }, orderBy: { step: "asc" }, select: { step: true, value: true } })).length),
];

console.log(`\n${points.toLocaleString("en")} points per series, ${benchSeries().length} series; median of ${repeats}\n`);
console.log(ratioTable(results, results.at(-1)!, { rows: "rows returned", ratio: "raw ÷ this" }));

// The spike at every 99,991th step must survive bucketing.
const bucketed = await loadBucketedSeries(db, runId, one, 1, points, 1000);
const spikes = bucketed.points.filter((p) => p.max > 40).length;
console.log(`\nspikes kept in the 1000-point series: ${spikes} of ${Math.floor(points / 99991)}`);
await db.$disconnect();
