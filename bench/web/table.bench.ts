/**
 * Benchmark: the runs table with thousands of runs (server-side pages, sorts and filters).
 *
 *   DATABASE_URL=… npx tsx bench/web/table.bench.ts [--runs 5000] [--repeats 7]
 *
 * Seeds (once, tagged `bench-table`) RUNS runs, each with 3 key metrics × 2 actors × 20 steps and a
 * few memory samples, then times one 50-row page of `run.table` (what the page asks for) by creation
 * time, by the latest reward of an actor, deep in the list, and with a search; the baseline is every
 * matching run with its key metrics in one go (a table that pages in the browser would need that).
 */
import { parseArgs } from "node:util";
import { createDb, type Db } from "@troupe/db";
import { listRunTable, RunTableInput } from "../../apps/web/src/features/runs/server/table";
import { ratioTable, timeMedian } from "./timing";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5000" }, repeats: { type: "string", default: "7" } } });
const runs = Number(values.runs);
const repeats = Number(values.repeats);
const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is not set");
const db = createDb(url);
const TAG = "bench-table";

async function seed(db: Db): Promise<boolean> {
  if ((await db.run.count({ where: { tags: { has: TAG } } })) >= runs) return false;
  await db.run.deleteMany({ where: { tags: { has: TAG } } });
  await db.$executeRawUnsafe(
    `INSERT INTO "Run" (id, name, spec, "specVersion", seed, status, source, tags, "lastStep", "createdAt", "startedAt", "finishedAt")
     SELECT 'bench-table-' || g, 'sweep lr=' || (g % 50) || ' seed=' || g, '{}'::jsonb, 1, g,
            (ARRAY['succeeded','failed','cancelled','running']::"RunStatus"[])[1 + g % 4], (ARRAY['ui','api']::"RunSource"[])[1 + g % 2],
            ARRAY[$1, 'lr-' || (g % 5)], 20, now() - g * interval '1 minute', now() - g * interval '1 minute', now() - g * interval '1 minute' + interval '30 seconds'
     FROM generate_series(1, $2::int) g`,
    TAG, runs,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "MetricPoint" ("runId", name, actor, step, value, ts)
     SELECT 'bench-table-' || g, m, a, s, sin(g * 0.37 + s * 0.1) + (CASE WHEN a = 'bob' THEN 0.5 ELSE 0 END), now()
     FROM generate_series(1, $1::int) g, unnest(ARRAY['reward/mean','loss','kl']) m, unnest(ARRAY['alice','bob']) a, generate_series(1, 20) s`,
    runs,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "MemorySample" ("runId", seq, step, phase, device, actor, "rssBytes", ts)
     SELECT 'bench-table-' || g, s, s, 'update', 'cpu', 'alice', 1e9 + g * 1e5 + s, now()
     FROM generate_series(1, $1::int) g, generate_series(1, 5) s`,
    runs,
  );
  await db.$executeRawUnsafe(`ANALYZE`);
  return true;
}

const t0 = Date.now();
const seeded = await seed(db);
console.log(`${runs} runs: ${seeded ? `seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s` : "reused"}`);

const time = (label: string, fn: () => Promise<number>) => timeMedian(label, repeats, fn);

const page = async (input: Partial<RunTableInput>) => (await listRunTable(db, RunTableInput.parse({ tag: TAG, ...input }))).items.length;
const results = [
  await time("page 1, newest first", () => page({})),
  await time("page 1, by latest reward/mean (each run's first actor)", () => page({ sort: "reward/mean", dir: "desc" })),
  await time("page 1, by latest reward/mean of bob", () => page({ sort: "reward/mean", dir: "desc", sortActor: "bob" })),
  await time("page 100, by loss ascending", () => page({ sort: "loss", dir: "asc", page: 100 })),
  await time("page 1, search 'lr=7 '", () => page({ q: "lr=7 " })),
  await time("page 1, status failed, by step", () => page({ status: ["failed"], sort: "lastStep" })),
  await time("every run at once (baseline)", async () => {
    const all = await db.run.findMany({ where: { tags: { has: TAG } }, orderBy: { createdAt: "desc" } });
    const points = await db.metricPoint.findMany({ where: { runId: { in: all.map((r) => r.id) }, name: { in: ["reward/mean", "loss", "kl"] } }, select: { runId: true, value: true } });
    return points.length > 0 ? all.length : 0;
  }),
];
console.log(`\n${runs} runs; median of ${repeats}\n`);
console.log(ratioTable(results, results.at(-1)!, { rows: "rows", ratio: "baseline ÷ this" }));
await db.$disconnect();
