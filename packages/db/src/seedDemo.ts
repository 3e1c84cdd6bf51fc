import { isDeepStrictEqual } from "node:util";
import { DEMO_SPEC, DEMO_SPEC_INPUT } from "@troupe/contracts";
import type { Db } from "./client";

/** The demo experiment's fixed id: seeding upserts this one row and touches no other. */
export const DEMO_EXPERIMENT_ID = "demo-echo-letter";

export type SeedOutcome = "created" | "updated" | "unchanged";

/**
 * Makes sure the demo experiment exists and carries the current demo spec from contracts.
 * Idempotent: a re-seed never adds a second demo, never touches other experiments, and writes
 * nothing (so `updatedAt` keeps its place in "recently edited") when the demo is already current.
 * Edits to the demo itself are reset to the shipped demo; users keep changes by duplicating it.
 */
export async function seedDemo(db: Db): Promise<{ id: string; outcome: SeedOutcome }> {
  const wanted = {
    name: DEMO_SPEC_INPUT.name,
    description: DEMO_SPEC.description ?? "",
    // Stored as JSON: compare and write what JSON keeps (no undefined-valued keys).
    spec: JSON.parse(JSON.stringify(DEMO_SPEC)) as object,
    isDemo: true,
  };
  const existing = await db.experiment.findUnique({ where: { id: DEMO_EXPERIMENT_ID } });
  if (existing === null) {
    // ON CONFLICT DO NOTHING: a concurrent seed may insert first (Prisma's upsert is not atomic here).
    const { count } = await db.experiment.createMany({
      data: [{ id: DEMO_EXPERIMENT_ID, ...wanted }],
      skipDuplicates: true,
    });
    return { id: DEMO_EXPERIMENT_ID, outcome: count === 1 ? "created" : "unchanged" };
  }
  const current =
    existing.name === wanted.name &&
    existing.description === wanted.description &&
    existing.isDemo &&
    isDeepStrictEqual(existing.spec, wanted.spec);
  if (current) return { id: DEMO_EXPERIMENT_ID, outcome: "unchanged" };
  await db.experiment.update({ where: { id: DEMO_EXPERIMENT_ID }, data: wanted });
  return { id: DEMO_EXPERIMENT_ID, outcome: "updated" };
}
