import { z } from "zod";
import { EpisodeMessage, RunState } from "./events";

/**
 * How a run, its episodes and its metric series look to a reader: the web pages (tRPC), CI (REST,
 * `restApi.ts`) and the `troupe` CLI. One definition of each field; only the time type differs by
 * transport (tRPC carries `Date`s, REST ISO 8601 strings), so the shapes take it as a parameter.
 */

/** A time on the REST wire. */
export const IsoTimestamp = z.iso.datetime({ offset: true }).describe("ISO 8601 date-time (UTC)");

/** Where a run came from. */
export const RunSource = z.enum(["ui", "api", "seed"]);

/** What every list of runs shows of one: identity, state, progress, latest reward. */
export function runSummaryShape<T extends z.ZodType>(timestamp: T) {
  return z.object({
    id: z.string(),
    name: z
      .string()
      .describe("The run's readable name (`brisk-otter-17`): generated when the run is created, unique, matched by run search"),
    specName: z.string().describe("The RunSpec's `name` (the same for every run of a spec)"),
    status: RunState,
    experimentId: z.string().nullable(),
    experimentName: z.string().nullable(),
    createdAt: timestamp,
    startedAt: timestamp.nullable(),
    finishedAt: timestamp.nullable(),
    lastStep: z.number().int().nullable(),
    totalSteps: z.number().int().nullable().describe("`trainer.steps` of the frozen spec"),
    lastReward: z.number().nullable().describe("Latest `reward/mean` reported (any actor); null before the first step"),
  });
}

/** A run's launch settings and outcome, beside its summary on a run's own page or resource. */
export const runSettingsFields = {
  specVersion: z.number().int(),
  seed: z.number().int(),
  priority: z.number().int(),
  gpus: z.number().int().describe("GPUs the launch claims (an unplaced `trainer.device: auto` run takes at most what its runner has)"),
  gpuIds: z.array(z.number().int()).default([]).describe("The runner's own GPU indices the run holds (held, once it ended); empty on the CPU or before a runner claims it"),
  tags: z.array(z.string()),
  source: RunSource,
  error: z.string().nullable().describe("Why the run failed or was cancelled"),
};

/** One recorded conversation of a step, with its reward and (once trained on) its advantage. */
export function episodeShape<T extends z.ZodType>(timestamp: T) {
  return z.object({
    seq: z.number().int(),
    step: z.number().int(),
    environment: z.string(),
    group: z.number().int(),
    sample: z.number().int(),
    datasetRow: z.number().int().nullable(),
    messages: z.array(EpisodeMessage),
    reward: z.number(),
    rewardComponents: z.record(z.string(), z.number()),
    advantage: z.number().nullable(),
    ts: timestamp,
  });
}

/** One point of a metric series; a bucketed point keeps the bucket's last value with its min and max. */
export const MetricPointShape = z.object({
  step: z.number().int(),
  value: z.number().describe("The value (bucketed: the last value in the bucket)"),
  min: z.number(),
  max: z.number(),
});

/** One (metric, actor) series. */
export function metricSeriesShape<P extends z.ZodType>(point: P) {
  return z.object({
    name: z.string(),
    actor: z.string().describe('"" when the metric is not per actor'),
    total: z.number().int().describe("Points stored, before bucketing"),
    bucketed: z.boolean(),
    points: z.array(point),
  });
}

/** What a cancel did: the same two answers over tRPC and REST. */
export const RunCancelOutcome = z
  .enum(["cancelled", "requested"])
  .describe("`cancelled`: it was still queued and is cancelled now; `requested`: the runner was asked to stop it");
export type RunCancelOutcome = z.infer<typeof RunCancelOutcome>;

/**
 * What deleting an ended run answers (tRPC and REST). Its rows are gone; its files are not: the run's
 * folder lives on the runner host that ran it, which the web app cannot reach.
 */
export const RunDeleted = z.object({
  id: z.string(),
  name: z.string().describe("The deleted run's readable name"),
  runnerId: z.string().nullable().describe("The runner host that ran it (null: it never started)"),
  workDir: z
    .string()
    .nullable()
    .describe(
      "The run's folder on that host (checkpoints, logs, its data files): NOT removed by the delete; remove it on the host " +
        "to free the space. Null when the run never started",
    ),
});
export type RunDeleted = z.infer<typeof RunDeleted>;
