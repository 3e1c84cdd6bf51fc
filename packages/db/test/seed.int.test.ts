import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { DEMO_SPEC, DEMO_SPEC_INPUT, MULTI_AGENT_DEMO_SPEC } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations, REPO_ROOT } from "../scripts/schema-engine";
import { createDb, DEMO_EXPERIMENT_ID, DEMOS, MULTI_AGENT_DEMO_EXPERIMENT_ID, seedDemo, seedDemos, type Db } from "../src/index";
import { ThrowawayDatabases } from "./throwawayDatabases";

const databases = new ThrowawayDatabases();
const url = databases.url("seed");
let db: Db;

beforeAll(async () => {
  await applyMigrations(url);
  db = createDb(url);
});

afterAll(async () => {
  await db?.$disconnect();
  await databases.dropAll();
});

const demoRows = () => db.experiment.findMany({ where: { isDemo: true } });

describe("seedDemo", () => {
  it("creates the demo experiment from the contracts' demo spec", async () => {
    expect(await seedDemo(db)).toEqual({ id: DEMO_EXPERIMENT_ID, outcome: "created" });
    const rows = await demoRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: DEMO_EXPERIMENT_ID, name: DEMO_SPEC_INPUT.name, description: DEMO_SPEC.description });
    expect(rows[0]?.spec).toEqual(JSON.parse(JSON.stringify(DEMO_SPEC)));
  });

  it("re-seeding adds nothing and writes nothing", async () => {
    const before = await db.experiment.findUniqueOrThrow({ where: { id: DEMO_EXPERIMENT_ID } });
    expect(await seedDemo(db)).toEqual({ id: DEMO_EXPERIMENT_ID, outcome: "unchanged" });
    expect(await seedDemo(db)).toEqual({ id: DEMO_EXPERIMENT_ID, outcome: "unchanged" });
    expect(await demoRows()).toHaveLength(1);
    const after = await db.experiment.findUniqueOrThrow({ where: { id: DEMO_EXPERIMENT_ID } });
    expect(after.updatedAt).toEqual(before.updatedAt);
  });

  it("never touches a user's experiments, even ones copied from the demo", async () => {
    const mine = await db.experiment.create({
      data: { name: "my copy", description: "edited", spec: { ...DEMO_SPEC, seed: 7, name: "my copy" } },
    });
    const edited = await db.experiment.update({ where: { id: mine.id }, data: { spec: { ...DEMO_SPEC, seed: 99 } } });
    await seedDemo(db);
    // Compared as JSON: rows read through the client's spec-ordering extension are not plain objects.
    const plain = (row: unknown) => JSON.parse(JSON.stringify(row)) as unknown;
    expect(plain(await db.experiment.findUniqueOrThrow({ where: { id: mine.id } }))).toEqual(plain(edited));
    expect(await db.experiment.count()).toBe(2);
  });

  it("brings an outdated demo back to the shipped spec", async () => {
    await db.experiment.update({ where: { id: DEMO_EXPERIMENT_ID }, data: { spec: { old: true }, name: "old" } });
    expect(await seedDemo(db)).toEqual({ id: DEMO_EXPERIMENT_ID, outcome: "updated" });
    const demo = await db.experiment.findUniqueOrThrow({ where: { id: DEMO_EXPERIMENT_ID } });
    expect(demo.name).toBe(DEMO_SPEC_INPUT.name);
    expect(demo.spec).toEqual(JSON.parse(JSON.stringify(DEMO_SPEC)));
  });

  it("two seeds at once still leave one demo", async () => {
    await db.experiment.delete({ where: { id: DEMO_EXPERIMENT_ID } });
    const other = createDb(url);
    const outcomes = await Promise.all([seedDemo(db), seedDemo(other)]).finally(() => other.$disconnect());
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(["created", "unchanged"]);
    expect(await demoRows()).toHaveLength(1);
  });

  it("npm run seed does the same from the command line", async () => {
    const exec = promisify(execFile);
    const tsx = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
    const { stdout } = await exec(tsx, [path.join(REPO_ROOT, "packages", "db", "scripts", "seed.ts")], {
      env: { ...process.env, DATABASE_URL: url },
    });
    expect(stdout).toMatch(/Demo experiment demo-echo-letter: unchanged\./);
    expect(stdout).toMatch(/Demo experiment demo-two-actors: created\./);
    expect(await demoRows()).toHaveLength(DEMOS.length);
  });

  it("seeds the multi-agent demo too (the relay: two learning actors under a round spec), in the dashboard's order after the single-actor one", async () => {
    const outcomes = await seedDemos(db);
    expect(outcomes.map((o) => o.id)).toEqual([DEMO_EXPERIMENT_ID, MULTI_AGENT_DEMO_EXPERIMENT_ID]);
    const multi = await db.experiment.findUniqueOrThrow({ where: { id: MULTI_AGENT_DEMO_EXPERIMENT_ID } });
    expect(multi.isDemo).toBe(true);
    expect(multi.spec).toEqual(JSON.parse(JSON.stringify(MULTI_AGENT_DEMO_SPEC)));
    const spec = MULTI_AGENT_DEMO_SPEC;
    expect(spec.actors.map((a) => [a.name, a.trainable])).toEqual([["alice", true], ["bob", true]]);
    expect(spec.environments[0]).toMatchObject({ kind: "collaborative", roundSpec: "alice -> bob", systemPrompts: { alice: "secret {{ letter * 8 }}" } });
  });
});
