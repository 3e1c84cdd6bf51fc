import { z } from "zod";
import { episodeShape, MetricPointShape, metricSeriesShape, Phase, RunCancelOutcome, RunState, runSettingsFields, runSummaryShape } from "@troupe/contracts";

/** The run, episode and metric shapes are the REST API's too (`@troupe/contracts` `runViews.ts`), with `Date`s here. */
export const RunSummary = runSummaryShape(z.date());
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
  ...runSettingsFields,
  /** The frozen RunSpec (JSON, defaults filled), exactly as launched. */
  spec: z.unknown(),
  logTail: z.string().nullable(),
  attempt: z.number().int(),
  lastSeq: z.number().int(),
  runnerId: z.string().nullable(),
  /** The run's folder on its runner host (null until a runner takes it). */
  workDir: z.string().nullable(),
  cancelRequestedAt: z.date().nullable(),
  heartbeatAt: z.date().nullable(),
});
export type RunDetail = z.infer<typeof RunDetail>;

export const RunCancelOutput = z.object({
  status: RunState,
  outcome: RunCancelOutcome,
});

/** Default points per series over the wire; longer series are bucketed server-side. */
export const MAX_SERIES_POINTS = 1000;
/** Upper bound a client may ask for (a wide chart on a large screen: one point per pixel). */
export const MAX_SERIES_POINTS_LIMIT = 4000;

export const MetricPoint = MetricPointShape.extend({
  /** When asked for (`withTime`): when the point's step was reported, in epoch milliseconds (a number,
   *  not a Date: superjson would add a metadata path per point). */
  ts: z.number().optional(),
});
export type MetricPointOut = z.infer<typeof MetricPoint>;

export const MetricSeries = metricSeriesShape(MetricPoint);
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
/**
 * A series as the charts receive it (`run.metrics`): one array per field instead of an object per
 * point, values to 7 significant digits (float32's precision; the REST API returns stored values
 * exactly). A run page's 20 series × 276 buckets arrive in the page in about half the bytes, and the
 * browser parses them before anything is drawn. `lib/seriesColumns.ts` converts both ways.
 */
export const MetricColumns = z
  .object({
    name: z.string(),
    actor: z.string(),
    total: z.number().int(),
    bucketed: z.boolean(),
    step: z.array(z.number().int()),
    value: z.array(z.number()),
    /** Left out when every bucket held one point (min = max = value). */
    min: z.array(z.number()).optional(),
    max: z.array(z.number()).optional(),
    /** With `withTime`: when each step was reported, epoch milliseconds. */
    ts: z.array(z.number()).optional(),
  })
  .refine((c) => [c.value, c.min, c.max, c.ts].every((a) => a === undefined || a.length === c.step.length), {
    message: "every column has one entry per step",
  });
export type MetricColumns = z.infer<typeof MetricColumns>;

export const RunMetricsOutput = z.object({ series: z.array(MetricColumns) });

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
export const EpisodeOut = episodeShape(z.date());
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
