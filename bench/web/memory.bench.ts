/**
 * Benchmark: the Memory tab's queries on the long bench run (300,000 memory samples over 1,000,000
 * steps, 8 series on 2 devices), read from MemoryRollup, against the full scans they replaced.
 *
 *   DATABASE_URL=… npx tsx bench/web/memory.bench.ts [--points 1000000] [--repeats 7]
 *
 * Seeds the run as series.bench.ts does (reused when it exists; the memory samples are re-seeded if
 * they have an older shape), then times in this process and database: the peaks table, every memory
 * series bucketed to 1000 points, one device's series, and the runs table's peak-memory cells; each
 * next to the previous full-scan query, which is its baseline. Prints medians and the ratios.
 */
import { fullScanPeaks } from "../../apps/web/test/helpers/fullScanPeaks";
import { loadMemoryPeaks } from "../../apps/web/src/features/runs/server/memoryPeaks";
import { loadMemorySeries } from "../../apps/web/src/features/runs/server/memorySeries";
import { BENCH_MEMORY_SERIES, openBenchRun } from "./seed";
import { timeMedian, type Timed } from "./timing";

const { db, points, repeats, runId } = await openBenchRun(7);
const samples = await db.memorySample.count({ where: { runId } });

const time = (label: string, fn: () => Promise<number>) => timeMedian(label, repeats, fn);

/** The series query before the rollups: bounds by a scan, then each series bucketed from its samples. */
async function rawSeries(device: string | null, maxPoints: number): Promise<number> {
  const bounds = await db.$queryRaw<{ device: string; phase: string; actor: string; total: number; lo: number; hi: number }[]>`
    SELECT device, phase, actor, count(*)::int AS total, min(step)::int AS lo, max(step)::int AS hi
    FROM "MemorySample" WHERE "runId" = ${runId} AND (${device}::text IS NULL OR device = ${device}::text)
    GROUP BY device, phase, actor ORDER BY device, phase, actor`;
  const series = await Promise.all(
    bounds.map(
      (b) => db.$queryRaw<unknown[]>`
        SELECT max(step)::int AS step, max(seq)::int AS seq, max("rssBytes")::float8 AS "rssBytes",
               max("allocatedBytes")::float8 AS "allocatedBytes", max("reservedBytes")::float8 AS "reservedBytes",
               max("peakBytes")::float8 AS "peakBytes"
        FROM "MemorySample"
        WHERE "runId" = ${runId} AND device = ${b.device} AND phase = ${b.phase} AND actor = ${b.actor}
        GROUP BY floor(((step - ${b.lo}::int)::float8 * ${maxPoints}::int) / (${b.hi}::int - ${b.lo}::int + 1))
        ORDER BY 1, 2`,
    ),
  );
  return series.reduce((n, s) => n + s.length, 0);
}

const pairs: [Timed, Timed][] = [
  [
    await time("peaks by device, actor, phase", async () => (await loadMemoryPeaks(db, runId)).length),
    await time("peaks, full scan (before)", async () => (await fullScanPeaks(db, runId)).length),
  ],
  [
    await time("all series bucketed to 1000 (page load)", async () =>
      (await loadMemorySeries(db, runId, undefined, 1000)).reduce((n, s) => n + s.points.length, 0)),
    await time("all series, full scans (before)", () => rawSeries(null, 1000)),
  ],
  [
    await time("cuda:0 series bucketed to 1000", async () =>
      (await loadMemorySeries(db, runId, "cuda:0", 1000)).reduce((n, s) => n + s.points.length, 0)),
    await time("cuda:0 series, full scans (before)", () => rawSeries("cuda:0", 1000)),
  ],
  [
    await time("runs table peak-memory cells", async () =>
      (await db.$queryRaw<unknown[]>`
        SELECT "runId", max("rssBytes")::float8, max(greatest("peakBytes", "allocatedBytes", "reservedBytes"))::float8
        FROM "MemoryRollup" WHERE "runId" = ANY(${[runId]}::text[]) AND level = 20 GROUP BY "runId"`).length),
    await time("runs table peak-memory cells, full scan (before)", async () =>
      (await db.$queryRaw<unknown[]>`
        SELECT "runId", max("rssBytes")::float8, max(greatest("peakBytes", "allocatedBytes", "reservedBytes"))::float8
        FROM "MemorySample" WHERE "runId" = ANY(${[runId]}::text[]) GROUP BY "runId"`).length),
  ],
];

console.log(`\n${samples.toLocaleString("en")} memory samples in ${BENCH_MEMORY_SERIES.length} series over ${points.toLocaleString("en")} steps; median of ${repeats}\n`);
console.log(`| query | median ms | rows returned | before ÷ this |`);
console.log(`| --- | ---: | ---: | ---: |`);
for (const [now, before] of pairs) {
  console.log(`| ${now.label} | ${now.ms.toFixed(1)} | ${now.rows} | ${(before.ms / now.ms).toFixed(1)}× |`);
  console.log(`| ${before.label} | ${before.ms.toFixed(1)} | ${before.rows} | 1.0× |`);
}

// The seeded spike (alice's update at 60% of the run) must be the top of the peaks table and survive bucketing.
const peaks = await loadMemoryPeaks(db, runId);
const top = peaks.reduce((a, b) => ((b.peakBytes ?? 0) > (a.peakBytes ?? 0) ? b : a));
const update = (await loadMemorySeries(db, runId, "cuda:0", 1000)).find((s) => s.actor === "alice" && s.phase === "update");
const charted = Math.max(...(update?.points ?? []).map((p) => p.peakBytes ?? 0));
console.log(
  `\nhighest peak: ${top.device} ${top.actor} ${top.phase} ${(Number(top.peakBytes) / 2 ** 30).toFixed(1)} GiB at step ${top.atStep}; ` +
    `in the 1000-point chart: ${charted === top.peakBytes ? "kept" : `LOST (chart max ${(charted / 2 ** 30).toFixed(1)} GiB)`}`,
);
await db.$disconnect();
