import { z } from "zod";
import { CollectInput, CollectResult } from "./collect";
import { RunState } from "./events";
import { RunSpec } from "./runSpec";
import {
  episodeShape,
  IsoTimestamp,
  MetricPointShape,
  metricSeriesShape,
  RunCancelOutcome,
  RunDeleted,
  runSettingsFields,
  runSummaryShape,
} from "./runViews";

/**
 * The REST API's (`/api/v1`) requests and responses. The web app's handlers parse with them and
 * render its OpenAPI document from them; the `troupe` CLI reads its answers with the same types. The
 * run, episode and metric shapes are the ones the web pages read (`runViews.ts`), with ISO 8601 times.
 * Dataset uploads stay with the web app's dataset parser (`features/api/server/schemas.ts`).
 */

const Id = z.string().min(1).max(200);

// ---------- problems ----------

export const ApiFieldIssue = z.object({
  path: z.string().describe("Dotted path of the field at fault, e.g. `trainer.steps`; `(root)` for the whole body"),
  message: z.string(),
  line: z.number().int().min(1).optional().describe("Line in the request body (YAML bodies, dataset rows)"),
  column: z.number().int().min(1).optional().describe("Column in the request body (YAML bodies)"),
});
export type ApiFieldIssue = z.infer<typeof ApiFieldIssue>;

export const ApiProblem = z
  .object({
    type: z.string().describe("A URI naming the kind of problem"),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().describe("One line saying what went wrong"),
    instance: z.string().optional(),
    errors: z.array(ApiFieldIssue).optional().describe("Every validation issue, with its field path"),
  })
  .describe("RFC 9457 problem details (`application/problem+json`)");
export type ApiProblem = z.infer<typeof ApiProblem>;

// ---------- runs ----------

export const ApiRunPriority = z.number().int().min(0).max(100).describe("0 (default) to 100; higher is claimed sooner");
export const ApiRunTag = z.string().min(1).max(64);

export const ApiLaunchEnvelope = z
  .object({
    spec: RunSpec,
    experimentId: Id.optional().describe("Attach the run to this experiment (it must exist)"),
    priority: ApiRunPriority.optional(),
    tags: z.array(ApiRunTag).max(32).optional().describe("Added to the spec's own tags"),
  })
  .strict()
  .describe("A RunSpec with launch options");

/**
 * `POST /runs` body: either the envelope (recognised by its `spec` key) or a bare RunSpec, so a spec
 * file from a repository can be sent as it is.
 */
export const ApiLaunchBody = z.union([ApiLaunchEnvelope, RunSpec]);

export const ApiRun = runSummaryShape(IsoTimestamp).extend({
  ...runSettingsFields,
  terminal: z.boolean().describe("True once the run has ended (succeeded, failed, cancelled or stopped)"),
  cancelRequested: z.boolean(),
  url: z.string().describe("The run's page in the web UI (path)"),
});
export type ApiRun = z.infer<typeof ApiRun>;

export const ApiRunWithSpec = ApiRun.extend({
  spec: z.unknown().describe("The frozen RunSpec, defaults filled, exactly as launched"),
});
export type ApiRunWithSpec = z.infer<typeof ApiRunWithSpec>;

export const ApiRunListQuery = z
  .object({
    status: RunState.optional(),
    tag: ApiRunTag.optional().describe("Only runs carrying this tag"),
    experimentId: Id.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: Id.optional().describe("`nextCursor` of the previous page"),
  })
  .strict();

export const ApiRunList = z.object({
  items: z.array(ApiRun),
  nextCursor: z.string().nullable().describe("Pass as `cursor` for the next (older) page; null on the last"),
});
export type ApiRunList = z.infer<typeof ApiRunList>;

export const ApiRunIdParams = z.object({ id: Id.describe("Run id") }).strict();

/** Long-poll cap: proxies and CI runners tolerate five minutes; the CLI loops for longer waits. */
export const MAX_WAIT_SECONDS = 300;
export const ApiRunWaitQuery = z
  .object({
    timeout: z.coerce
      .number()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .default(30)
      .describe(`Seconds to wait at most (0..${MAX_WAIT_SECONDS}, default 30)`),
  })
  .strict();
export const ApiRunWait = z.object({
  run: ApiRun,
  done: z.boolean().describe("True when the run has ended"),
  timedOut: z.boolean().describe("True when the timeout passed first (the run is still queued or running)"),
  waitedMs: z.number().int(),
});
export type ApiRunWait = z.infer<typeof ApiRunWait>;

export const ApiRunCancel = z.object({ run: ApiRun, outcome: RunCancelOutcome });
export type ApiRunCancel = z.infer<typeof ApiRunCancel>;

/** `DELETE /runs/{id}`: what was deleted, and where its files remain. */
export const ApiRunDelete = RunDeleted;
export type ApiRunDelete = z.infer<typeof ApiRunDelete>;

export const ApiRunControl = z.object({
  run: ApiRun,
  outcome: z
    .enum(["requested", "requeued"])
    .describe(
      "`requested`: the runner was asked and the run changes state at its next step boundary (use `/wait` or poll); " +
        "`requeued`: an ended run was queued again to resume from its latest checkpoint",
    ),
  fromStep: z.number().int().optional().describe("With `requeued`: the checkpoint step the new attempt continues after"),
});
export type ApiRunControl = z.infer<typeof ApiRunControl>;

// ---------- metrics ----------

export const MAX_METRIC_BUCKETS = 10_000;
const commaList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0));

export const ApiMetricsQuery = z
  .object({
    name: commaList
      .pipe(z.array(z.string().min(1).max(128)).max(64))
      .optional()
      .describe("Metric names, comma-separated (e.g. `reward/mean,loss`); default: every metric of the run"),
    actor: z.string().max(64).optional().describe("Only this actor's series (`\"\"`-actor series are run-wide)"),
    format: z.enum(["json", "csv"]).default("json"),
    buckets: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_METRIC_BUCKETS)
      .optional()
      .describe("Bucket each series into at most N points over its step range (value = last, with min and max); omitted: raw points"),
  })
  .strict();

export const ApiMetricSeries = metricSeriesShape(MetricPointShape);
export type ApiMetricSeries = z.infer<typeof ApiMetricSeries>;
export const ApiMetrics = z.object({ runId: z.string(), series: z.array(ApiMetricSeries) });
export type ApiMetrics = z.infer<typeof ApiMetrics>;
export const METRICS_CSV_HEADER = "name,actor,step,value,min,max";

// ---------- episodes ----------

/** Largest step or seq there can be (a Postgres int). */
const INT32_MAX = 2 ** 31 - 1;

export const ApiEpisodesQuery = z
  .object({
    // Steps and seqs are Postgres ints: a bigger number is refused here, not by the database (a 500).
    step: z.coerce.number().int().min(0).max(INT32_MAX, `must be at most ${INT32_MAX}`).optional().describe("Only episodes of this step"),
    cursor: z
      .string()
      .regex(/^\d{1,10}$/, "must be a `nextCursor` from a previous page")
      .refine((v) => Number(v) <= INT32_MAX, "must be a `nextCursor` from a previous page")
      .optional()
      .describe("`nextCursor` of the previous page"),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .strict();
export const ApiEpisode = episodeShape(IsoTimestamp);
export type ApiEpisode = z.infer<typeof ApiEpisode>;
export const ApiEpisodePage = z.object({ items: z.array(ApiEpisode), nextCursor: z.string().nullable() });
export type ApiEpisodePage = z.infer<typeof ApiEpisodePage>;

// ---------- collect ----------

/** `POST /runs/{id}/collect`: the body and answer of `run.collect` (collect.ts), shared with `troupe collect`. */
export const ApiCollectBody = CollectInput;
export const ApiCollectResult = CollectResult;
export type ApiCollectResult = z.infer<typeof ApiCollectResult>;

// ---------- health ----------

const ApiCheck = z.object({ ok: z.boolean(), latencyMs: z.number(), error: z.string().optional() });
export const ApiHealth = z.object({ status: z.enum(["ok", "degraded"]), checks: z.object({ postgres: ApiCheck, redis: ApiCheck }) });
export type ApiHealth = z.infer<typeof ApiHealth>;
