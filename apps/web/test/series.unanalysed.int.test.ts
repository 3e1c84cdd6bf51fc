import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { createDb, Prisma, type Db } from "@troupe/db";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listMetricSeriesKeys, loadMetricSeries, pointBucketsSql, rollupBucketsSql, rollupLevel } from "../src/features/runs/server/series";

/**
 * The run page's chart statements on tables Postgres has never analysed (autovacuum off, no ANALYZE:
 * `pg_class.reltuples` = -1). Without statistics the planner guesses one row everywhere; a plan that
 * depends on the guess re-ran a whole series' aggregate once per point (7 s for a 2,500-step series).
 * The rule checked on the real plans (EXPLAIN ANALYZE): nothing but an index probe runs more than once.
 * A database of this test's own, so switching autovacuum off touches no other test's tables.
 */

const REPO = resolve(__dirname, "../../..");
const TABLES = ["Run", "RunEvent", "MetricPoint", "MetricRollup", "MemorySample", "MemoryRollup", "Episode", "LogLine"];
const SERIES = ["reward/mean", "reward/std", "loss", "kl", "clip_frac", "entropy", "grad_norm", "lr", "step_time_s", "advantage/mean"].flatMap((name) =>
  ["alice", "bob"].map((actor) => ({ name, actor })),
);

let admin: pg.Client;
let dbName: string;
let db: Db;

beforeAll(async () => {
  const base = new URL(process.env.DATABASE_URL ?? "");
  if (!base.protocol.startsWith("postgres")) throw new Error("this test needs DATABASE_URL");
  dbName = `troupe_unanalysed_${randomBytes(4).toString("hex")}`;
  const adminUrl = new URL(base);
  adminUrl.pathname = "/postgres";
  admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  const migrate = spawnSync("npm", ["run", "-s", "-w", "@troupe/db", "migrate"], { cwd: REPO, env: { ...process.env, DATABASE_URL: url.toString() }, encoding: "utf8", timeout: 120_000 });
  if (migrate.status !== 0) throw new Error(`migrate failed: ${migrate.stderr}${migrate.stdout}`);
  db = createDb(url.toString());
  for (const table of TABLES) await db.$executeRawUnsafe(`ALTER TABLE "${table}" SET (autovacuum_enabled = false)`);
}, 180_000);

afterAll(async () => {
  await db?.$disconnect();
  await admin?.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin?.end();
});

/** A run with `series` metric series of `steps` steps each, inserted in SQL (the rollup trigger runs). */
async function seedRun(series: { name: string; actor: string }[], steps: number): Promise<string> {
  const run = await db.run.create({ data: { name: "unanalysed", spec: {}, specVersion: 1, seed: 0, status: "running", lastStep: steps }, select: { id: true } });
  for (const [i, s] of series.entries()) {
    await db.$executeRaw`INSERT INTO "MetricPoint" ("runId", name, actor, step, value, ts)
      SELECT ${run.id}, ${s.name}, ${s.actor}, g, sin(g / 50.0 + ${i}::int), timestamp '2025-01-01' + g * interval '1 second'
      FROM generate_series(1, ${steps}::int) g`;
  }
  return run.id;
}

interface PlanNode {
  "Node Type": string;
  "Actual Loops": number;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}

/** Nodes of a plan that ran more than once and are not an index probe. */
function repeatedNodes(node: PlanNode, out: string[] = []): string[] {
  if (node["Actual Loops"] > 1 && !/^Index (Only )?Scan$/.test(node["Node Type"])) out.push(`${node["Node Type"]} ×${node["Actual Loops"]}`);
  for (const child of node.Plans ?? []) repeatedNodes(child, out);
  return out;
}

async function plan(sql: Prisma.Sql): Promise<PlanNode> {
  const [row] = await db.$queryRaw<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>(Prisma.sql`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`);
  return row!["QUERY PLAN"][0].Plan;
}

const reltuples = async (table: string) =>
  Number((await db.$queryRaw<{ n: number }[]>`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = ${table}`)[0]!.n);

describe("chart queries on tables never analysed", () => {
  it("a 2,500-step run: each series is one pass over its points plus one index probe per bucket", { timeout: 180_000 }, async () => {
    const runId = await seedRun(SERIES, 2_500);
    expect(await reltuples("MetricPoint")).toBe(-1); // never analysed: the planner has no statistics at all
    expect(rollupLevel(2_500, 600)).toBeNull(); // read from the points, the statement the page's 7.4 s came from

    const loss = await plan(pointBucketsSql(runId, { name: "loss", actor: "alice" }, 1, 2_500, 600));
    expect(repeatedNodes(loss)).toEqual([]);

    let t = Date.now();
    const unanalysed = await loadMetricSeries(db, runId, SERIES.map((s) => s.name), 600);
    const unanalysedMs = Date.now() - t;
    expect(unanalysed).toHaveLength(20);
    expect(unanalysed.every((s) => s.points.length === 600 && s.total === 2_500)).toBe(true);
    await db.$executeRawUnsafe(`ANALYZE "MetricPoint"`);
    t = Date.now();
    const analysed = await loadMetricSeries(db, runId, SERIES.map((s) => s.name), 600);
    console.log(`[unanalysed] 20 series × 2,500 steps at 600 points: ${unanalysedMs} ms never analysed, ${Date.now() - t} ms after ANALYZE`);
    expect(unanalysed).toEqual(analysed);
  });

  it("a 200,000-step series read from the rollups: no repeated scan of the rollup blocks either", { timeout: 180_000 }, async () => {
    // A fresh table state for the rollups: they have never been analysed whatever the test above did.
    expect(await reltuples("MetricRollup")).toBe(-1);
    const runId = await seedRun([{ name: "loss", actor: "alice" }], 200_000);
    const level = rollupLevel(200_000, 600);
    expect(level).not.toBeNull();
    const rollup = await plan(rollupBucketsSql(runId, { name: "loss", actor: "alice" }, 1, 200_000, 600, level!));
    expect(repeatedNodes(rollup)).toEqual([]);
    const [series] = await loadMetricSeries(db, runId, ["loss"], 600);
    expect(series!.total).toBe(200_000);
    expect(series!.points.at(-1)).toMatchObject({ step: 200_000, value: expect.closeTo(Math.sin(200_000 / 50), 6) });
  });
});
