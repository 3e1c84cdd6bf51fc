import { isDeepStrictEqual } from "node:util";
import { DEMO_SPEC, DEMO_SPEC_INPUT, MULTI_AGENT_DEMO_SPEC, MULTI_AGENT_DEMO_SPEC_INPUT, type RunSpec } from "@troupe/contracts";
import type { Db } from "./client";

/** The demo experiment's fixed id: seeding upserts this one row and touches no other. */
export const DEMO_EXPERIMENT_ID = "demo-echo-letter";
/** The multi-agent demo's fixed id (the relay: two learning actors under a round spec; the id predates it). */
export const MULTI_AGENT_DEMO_EXPERIMENT_ID = "demo-two-actors";

interface Demo {
  id: string;
  name: string;
  spec: RunSpec;
}

const ECHO: Demo = { id: DEMO_EXPERIMENT_ID, name: DEMO_SPEC_INPUT.name, spec: DEMO_SPEC };
const TWO_ACTORS: Demo = { id: MULTI_AGENT_DEMO_EXPERIMENT_ID, name: MULTI_AGENT_DEMO_SPEC_INPUT.name, spec: MULTI_AGENT_DEMO_SPEC };

/**
 * Every shipped demo, in the order the dashboard shows them: the single-actor demo first (the
 * quickest to watch learn), then the multi-agent one.
 */
export const DEMOS: readonly Demo[] = [ECHO, TWO_ACTORS];

/** Seeds every demo (see seedDemo); the outcome of each, in seeding order. */
export async function seedDemos(db: Db): Promise<{ id: string; outcome: SeedOutcome }[]> {
  const out: { id: string; outcome: SeedOutcome }[] = [];
  for (const demo of DEMOS) out.push(await seedDemo(db, demo));
  return out;
}

export type SeedOutcome = "created" | "updated" | "unchanged";

/**
 * Makes sure the demo experiment exists and carries the current demo spec from contracts.
 * Idempotent: a re-seed never adds a second demo, never touches other experiments, and writes
 * nothing (so `updatedAt` keeps its place in "recently edited") when the demo is already current.
 * Edits to the demo itself are reset to the shipped demo; users keep changes by duplicating it.
 */
export async function seedDemo(db: Db, demo: Demo = ECHO): Promise<{ id: string; outcome: SeedOutcome }> {
  const { id } = demo;
  const wanted = {
    name: demo.name,
    description: demo.spec.description ?? "",
    // Stored as JSON: compare and write what JSON keeps (no undefined-valued keys).
    spec: JSON.parse(JSON.stringify(demo.spec)) as object,
    isDemo: true,
  };
  const existing = await db.experiment.findUnique({ where: { id } });
  if (existing === null) {
    // ON CONFLICT DO NOTHING: a concurrent seed may insert first (Prisma's upsert is not atomic here).
    const { count } = await db.experiment.createMany({
      data: [{ id, ...wanted }],
      skipDuplicates: true,
    });
    return { id, outcome: count === 1 ? "created" : "unchanged" };
  }
  const current =
    existing.name === wanted.name &&
    existing.description === wanted.description &&
    existing.isDemo &&
    isDeepStrictEqual(existing.spec, wanted.spec);
  if (current) return { id, outcome: "unchanged" };
  await db.experiment.update({ where: { id }, data: wanted });
  return { id, outcome: "updated" };
}
