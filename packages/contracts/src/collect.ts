import { z } from "zod";
import { Identifier } from "./runSpec";

/**
 * Collect: a finished run's recorded episodes at or above a reward threshold, per actor, saved as a dataset
 * in the designer's library with `prompt` / `completion` columns (what an `sft` environment reads by default),
 * so the next run of a pipeline (SFT, then RL) trains on them. The tRPC procedure `run.collect`, the REST
 * `POST /api/v1/runs/{id}/collect` and `troupe collect` take this body.
 */
export const CollectInput = z
  .object({
    name: Identifier.describe("Name of the new dataset (a RunSpec identifier; it must be free)"),
    minReward: z.number().finite().describe("Keep an actor's completion when its episode's reward is at least this"),
    minRewardByActor: z
      .record(Identifier, z.number().finite())
      .optional()
      .describe("Per-actor thresholds, overriding minReward for the actors named"),
    actors: z.array(Identifier).min(1).optional().describe("Only these actors' completions (default: every trained actor)"),
    fromStep: z.number().int().min(0).optional().describe("Only episodes of this step and later"),
    dedupe: z.boolean().default(true).describe("Keep one row per (actor, prompt, completion): the first recorded"),
    evalFraction: z.number().min(0).lt(1).default(0).describe("Held-out share, copied into the dataset's RunSpec entry"),
    description: z.string().max(2000).optional(),
  })
  .strict();
export type CollectInput = z.input<typeof CollectInput>;

export const CollectActorCount = z.object({
  actor: z.string(),
  threshold: z.number(),
  scanned: z.number().int().describe("Completions of this actor in the recorded episodes"),
  kept: z.number().int().describe("Rows saved (after the threshold and dedupe)"),
});

export const CollectResult = z.object({
  dataset: z.object({
    id: z.string(),
    name: z.string(),
    rowCount: z.number().int(),
    columns: z.array(z.string()),
  }),
  runId: z.string(),
  episodesScanned: z.number().int(),
  actors: z.array(CollectActorCount),
  /** The RunSpec `datasets[]` entry that reads it (a stored upload). */
  datasetSpec: z.object({
    name: z.string(),
    source: z.object({ kind: z.literal("stored"), datasetId: z.string(), format: z.literal("jsonl") }),
    evalFraction: z.number(),
  }),
});
export type CollectResult = z.infer<typeof CollectResult>;

/** One saved row: the completion, what it answered, and where it came from. */
export interface CollectedRow {
  prompt: string;
  completion: string;
  actor: string;
  reward: number;
  step: number;
  environment: string;
  datasetRow: number | null;
  run: string;
}
