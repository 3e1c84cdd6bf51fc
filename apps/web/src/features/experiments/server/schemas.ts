import { z } from "zod";
import { RunSpec } from "@troupe/contracts";

/** What a card shows about a spec: who acts where, how long, which algorithm. */
export const ExperimentSpecSummary = z.object({
  actors: z.array(
    z.object({ name: z.string(), model: z.string(), backend: z.string(), trainable: z.boolean() }),
  ),
  environments: z.array(
    z.object({ name: z.string(), kind: z.string(), actors: z.array(z.string()), roundSpec: z.string().nullable() }),
  ),
  algorithm: z.string(),
  groupSize: z.number().int(),
  steps: z.number().int(),
  seed: z.number().int(),
  device: z.string(),
});
export type ExperimentSpecSummary = z.infer<typeof ExperimentSpecSummary>;

export const ExperimentListItem = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  isDemo: z.boolean(),
  updatedAt: z.date(),
  /** Null when the stored spec no longer validates; `specError` then says why. */
  summary: ExperimentSpecSummary.nullable(),
  specError: z.string().nullable(),
  runCount: z.number().int(),
});
export type ExperimentListItem = z.infer<typeof ExperimentListItem>;

export const ExperimentListInput = z.object({ limit: z.number().int().min(1).max(200).default(50) }).strict();
export const ExperimentListOutput = z.object({ items: z.array(ExperimentListItem) });

export const ExperimentByIdInput = z.object({ id: z.string().min(1) }).strict();
export const ExperimentDetail = ExperimentListItem.extend({
  createdAt: z.date(),
  /** The stored spec as saved (JSON). */
  spec: z.unknown(),
});

/**
 * Launch-time overrides. Kept loose on purpose: the merged spec is validated by `RunSpec`, so a bad
 * value is reported at its spec path (`trainer.steps`, `seed`), the same path the designer shows.
 */
export const LaunchOverrides = z
  .object({ steps: z.number().optional(), seed: z.number().optional() })
  .strict();
export type LaunchOverrides = z.infer<typeof LaunchOverrides>;

/** Run priority: 0 (normal) to 100; a higher number is claimed sooner. */
export const RunPriority = z.number().int().min(0).max(100);

export const LaunchInput = z
  .object({
    experimentId: z.string().min(1),
    overrides: LaunchOverrides.default({}),
    priority: RunPriority.default(0),
    /** GPUs the run claims; the distinct GPUs of its actors' placement when absent. */
    gpus: z.number().int().min(0).max(1024).optional(),
  })
  .strict();
export type LaunchInput = z.input<typeof LaunchInput>;

export const LaunchOutput = z.object({ runId: z.string() });

/** Re-exported so the UI names the same schema the server validates with. */
export { RunSpec };
