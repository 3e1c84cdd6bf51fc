import { randomBytes } from "node:crypto";
import { DEMO_SPEC, DEMO_SPEC_INPUT } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../src/index";

/**
 * Specs are stored as `json`, which keeps keys in the order written. Rows written while the columns
 * were `jsonb` (which sorts keys) are put back in the contracts schema's order on read by the client
 * (Run.spec, Experiment.spec, DesignPart.spec), whichever query shape reads them.
 * Against the real database in DATABASE_URL (migrated).
 */
let db: Db;
const suffix = randomBytes(4).toString("hex");
const experimentId = `spec-order-exp-${suffix}`;
const runId = `spec-order-run-${suffix}`;
const partId = `spec-order-part-${suffix}`;
const text = (v: unknown) => JSON.stringify(v);

beforeAll(async () => {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("this test needs DATABASE_URL (a migrated database)");
  db = createDb(url);
  await db.experiment.create({ data: { id: experimentId, name: "spec order", spec: DEMO_SPEC_INPUT as object } });
  await db.run.create({ data: { id: runId, experimentId, name: "spec order", spec: DEMO_SPEC as object, specVersion: 1, seed: 0 } });
  await db.designPart.create({ data: { id: partId, kind: "actor", name: `spec-order-${suffix}`, spec: DEMO_SPEC_INPUT.actors[0] as object } });
});

afterAll(async () => {
  await db.run.deleteMany({ where: { id: runId } });
  await db.experiment.deleteMany({ where: { id: experimentId } });
  await db.designPart.deleteMany({ where: { id: partId } });
  await db.$disconnect();
});

describe("specs read through the client keep the author's key order", () => {
  it("the column keeps the order written (what a raw read sees)", async () => {
    const [raw] = await db.$queryRaw<{ spec: unknown }[]>`SELECT "spec" FROM "Run" WHERE "id" = ${runId}`;
    expect(text(raw!.spec)).toBe(text(DEMO_SPEC));
  });

  it("a row stored by jsonb (keys sorted) reads back in the schema's order", async () => {
    const sortedId = `${runId}-jsonb`;
    await db.run.create({ data: { id: sortedId, experimentId, name: "spec order (jsonb)", spec: DEMO_SPEC as object, specVersion: 1, seed: 0 } });
    try {
      // What the migration to `json` kept of a row written while the column was jsonb.
      await db.$executeRaw`UPDATE "Run" SET "spec" = "spec"::jsonb::json WHERE "id" = ${sortedId}`;
      const [raw] = await db.$queryRaw<{ spec: unknown }[]>`SELECT "spec" FROM "Run" WHERE "id" = ${sortedId}`;
      expect(text(raw!.spec)).not.toBe(text(DEMO_SPEC));
      expect(raw!.spec).toEqual(DEMO_SPEC); // same content, other order
      expect(text((await db.run.findUniqueOrThrow({ where: { id: sortedId }, select: { spec: true } })).spec)).toBe(text(DEMO_SPEC));
    } finally {
      await db.run.deleteMany({ where: { id: sortedId } });
    }
  });

  it("a run's spec comes back exactly as written, by every query shape", async () => {
    expect(text((await db.run.findUniqueOrThrow({ where: { id: runId } })).spec)).toBe(text(DEMO_SPEC));
    expect(text((await db.run.findUniqueOrThrow({ where: { id: runId }, select: { spec: true } })).spec)).toBe(text(DEMO_SPEC));
    expect(text((await db.run.findMany({ where: { id: runId }, select: { id: true, spec: true } }))[0]!.spec)).toBe(text(DEMO_SPEC));
    const viaRelation = await db.experiment.findUniqueOrThrow({ where: { id: experimentId }, include: { runs: { select: { spec: true } } } });
    expect(text(viaRelation.runs[0]!.spec)).toBe(text(DEMO_SPEC));
    const inTransaction = await db.$transaction((tx) => tx.run.findUniqueOrThrow({ where: { id: runId }, select: { spec: true } }));
    expect(text(inTransaction.spec)).toBe(text(DEMO_SPEC));
  });

  it("an experiment's spec (as written, defaults omitted) and a designer part's too", async () => {
    expect(text((await db.experiment.findUniqueOrThrow({ where: { id: experimentId } })).spec)).toBe(text(DEMO_SPEC_INPUT));
    const part = await db.designPart.findUniqueOrThrow({ where: { id: partId }, select: { spec: true } });
    expect(text(part.spec)).toBe(text(DEMO_SPEC_INPUT.actors[0]));
  });
});
