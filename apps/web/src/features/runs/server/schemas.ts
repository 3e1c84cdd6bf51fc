import { z } from "zod";
import { EpisodeMessage, Phase, RunState } from "@troupe/contracts";

export const RunSummary = z.object({
  id: z.string(),
  name: z.string(),
  status: RunState,
  experimentId: z.string().nullable(),
  experimentName: z.string().nullable(),
  createdAt: z.date(),
  startedAt: z.date().nullable(),
  finishedAt: z.date().nullable(),
  lastStep: z.number().int().nullable(),
  /** `trainer.steps` of the frozen spec. */
  totalSteps: z.number().int().nullable(),
  /** The latest `reward/mean` reported (any actor), or null before the first step. */
  lastReward: z.number().nullable(),
});
export type RunSummary = z.infer<typeof RunSummary>;

export const RunListInput = z
  .object({
    /** Id of the last run of the previous page. */
    cursor: z.string().min(1).nullish(),
    /** Sent by tRPC's infinite queries; pages only go forward (older runs). */
    direction: z.enum(["forward", "backward"]).optional(),
    limit: z.number().int().min(1).max(100).default(20),
    status: RunState.optional(),
    experimentId: z.string().min(1).optional(),
  })
  .strict();
export const RunListOutput = z.object({ items: z.array(RunSummary), nextCursor: z.string().nullable() });

export const RunIdInput = z.object({ runId: z.string().min(1) }).strict();

export const RunDetail = RunSummary.extend({
  specVersion: z.number().int(),
  /** The frozen RunSpec (JSON, defaults filled), exactly as launched. */
  spec: z.unknown(),
  seed: z.number().int(),
  priority: z.number().int(),
  gpus: z.number().int(),
  tags: z.array(z.string()),
  source: z.enum(["ui", "api", "seed"]),
  error: z.string().nullable(),
  logTail: z.string().nullable(),
  attempt: z.number().int(),
  lastSeq: z.number().int(),
  runnerId: z.string().nullable(),
  cancelRequestedAt: z.date().nullable(),
  heartbeatAt: z.date().nullable(),
});
export type RunDetail = z.infer<typeof RunDetail>;

export const RunCancelOutput = z.object({
  status: RunState,
  /** `cancelled`: done (it was still queued); `requested`: the runner was asked to stop it. */
  outcome: z.enum(["cancelled", "requested"]),
});

/** Default points per series over the wire; longer series are bucketed server-side. */
export const MAX_SERIES_POINTS = 1000;
/** Upper bound a client may ask for (a wide chart on a large screen: one point per pixel). */
export const MAX_SERIES_POINTS_LIMIT = 4000;

export const MetricPoint = z.object({
  step: z.number().int(),
  /** The last value in the bucket (the value itself when not bucketed). */
  value: z.number(),
  min: z.number(),
  max: z.number(),
  /** When asked for (`withTime`): when the point's step was reported. */
  ts: z.date().optional(),
});
export type MetricPointOut = z.infer<typeof MetricPoint>;

export const MetricSeries = z.object({
  name: z.string(),
  /** "" when the metric is not per actor. */
  actor: z.string(),
  /** Points stored for this series, before bucketing. */
  total: z.number().int(),
  bucketed: z.boolean(),
  points: z.array(MetricPoint),
});
export type MetricSeries = z.infer<typeof MetricSeries>;

export const RunMetricsInput = z
  .object({
    runId: z.string().min(1),
    names: z.array(z.string().min(1).max(128)).min(1).max(64),
    /** Buckets per series: the chart's width in pixels. */
    maxPoints: z.number().int().min(10).max(MAX_SERIES_POINTS_LIMIT).default(MAX_SERIES_POINTS),
    /** Zoom: only this step range, bucketed to maxPoints again. */
    fromStep: z.number().int().min(0).optional(),
    toStep: z.number().int().min(0).optional(),
    actors: z.array(z.string().max(64)).max(64).optional(),
    withTime: z.boolean().default(false),
  })
  .strict()
  .refine((v) => v.fromStep === undefined || v.toStep === undefined || v.fromStep <= v.toStep, {
    message: "fromStep must be <= toStep",
    path: ["fromStep"],
  });
export const RunMetricsOutput = z.object({ series: z.array(MetricSeries) });

export const MemoryPoint = z.object({
  step: z.number().int(),
  /** Highest seq in the point (the sample's own seq when not bucketed); the live stream continues after it. */
  seq: z.number().int(),
  rssBytes: z.number().nullable(),
  allocatedBytes: z.number().nullable(),
  reservedBytes: z.number().nullable(),
  peakBytes: z.number().nullable(),
});
export const MemorySeries = z.object({
  device: z.string(),
  phase: Phase.or(z.string()),
  actor: z.string(),
  total: z.number().int(),
  bucketed: z.boolean(),
  /** Bucketed points hold the highest value of each bucket (memory peaks matter more than averages). */
  points: z.array(MemoryPoint),
});
export type MemorySeries = z.infer<typeof MemorySeries>;
export const RunMemoryInput = z
  .object({
    runId: z.string().min(1),
    device: z.string().min(1).max(32).optional(),
    maxPoints: z.number().int().min(10).max(MAX_SERIES_POINTS).default(MAX_SERIES_POINTS),
  })
  .strict();
export const RunMemoryOutput = z.object({ series: z.array(MemorySeries) });

export const RunLogsInput = z
  .object({
    runId: z.string().min(1),
    /** Lines after this line number, oldest first. Omitted: the last `limit` lines (the tail). */
    afterLineNo: z.number().int().min(-1).optional(),
    /** Only lines containing this text (case-insensitive): the newest `limit` matches, oldest first. */
    q: z.string().min(1).max(200).optional(),
    limit: z.number().int().min(1).max(2000).default(200),
  })
  .strict();
export const LogLineOut = z.object({
  lineNo: z.number().int(),
  stream: z.string(),
  text: z.string(),
  ts: z.date(),
});
export const RunLogsOutput = z.object({ lines: z.array(LogLineOut), lastLineNo: z.number().int().nullable() });

export const RunEpisodesInput = z
  .object({
    runId: z.string().min(1),
    /** Episodes of this step; omitted: the latest step that has any. */
    step: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(200).default(20),
  })
  .strict();
export const EpisodeOut = z.object({
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
  ts: z.date(),
});
export type EpisodeOut = z.infer<typeof EpisodeOut>;
export const RunEpisodesOutput = z.object({
  step: z.number().int().nullable(),
  /** Steps that have episodes, newest first (at most 50), for a step picker. */
  recentSteps: z.array(z.number().int()),
  episodes: z.array(EpisodeOut),
});

export const RunMetricNamesOutput = z.object({
  series: z.array(z.object({ name: z.string(), actor: z.string(), firstStep: z.number().int(), lastStep: z.number().int() })),
});
