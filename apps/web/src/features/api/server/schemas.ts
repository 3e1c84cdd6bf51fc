import { z } from "zod";
import { EpisodeMessage, RunSpec, RunState } from "@troupe/contracts";

/**
 * The REST API's request and response schemas. Handlers parse with them and the OpenAPI document
 * (`openapi.ts`) is generated from them, so the two cannot disagree. Times are ISO 8601 strings.
 */

const Timestamp = z.iso.datetime({ offset: true }).describe("ISO 8601 date-time (UTC)");
const Id = z.string().min(1).max(200);

export const FieldIssueSchema = z
  .object({
    path: z.string().describe("Dotted path of the field at fault, e.g. `trainer.steps`; `(root)` for the whole body"),
    message: z.string(),
    line: z.number().int().min(1).optional().describe("Line in the request body (YAML bodies, dataset rows)"),
    column: z.number().int().min(1).optional().describe("Column in the request body (YAML bodies)"),
  });

export const ProblemSchema = z
  .object({
    type: z.string().describe("A URI naming the kind of problem"),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().describe("One line saying what went wrong"),
    instance: z.string().optional(),
    errors: z.array(FieldIssueSchema).optional().describe("Every validation issue, with its field path"),
  })
  .describe("RFC 9457 problem details (`application/problem+json`)");

// ---------- runs ----------

export const RunPriority = z.number().int().min(0).max(100).describe("0 (default) to 100; higher is claimed sooner");
export const RunTag = z.string().min(1).max(64);


export const LaunchEnvelope = z
  .object({
    spec: RunSpec,
    experimentId: Id.optional().describe("Attach the run to this experiment (it must exist)"),
    priority: RunPriority.optional(),
    tags: z.array(RunTag).max(32).optional().describe("Added to the spec's own tags"),
  })
  .strict()
  .describe("A RunSpec with launch options");

/**
 * `POST /runs` body: either the envelope (recognised by its `spec` key) or a bare RunSpec, so a spec
 * file from a repository can be sent as it is.
 */
export const LaunchBody = z.union([LaunchEnvelope, RunSpec]);

export const RunOut = z
  .object({
    id: z.string(),
    name: z.string(),
    status: RunState,
    terminal: z.boolean().describe("True once the run has ended (succeeded, failed, cancelled or stopped)"),
    source: z.enum(["ui", "api", "seed"]),
    experimentId: z.string().nullable(),
    experimentName: z.string().nullable(),
    priority: z.number().int(),
    gpus: z.number().int(),
    tags: z.array(z.string()),
    seed: z.number().int(),
    specVersion: z.number().int(),
    createdAt: Timestamp,
    startedAt: Timestamp.nullable(),
    finishedAt: Timestamp.nullable(),
    lastStep: z.number().int().nullable(),
    totalSteps: z.number().int().nullable().describe("`trainer.steps` of the frozen spec"),
    lastReward: z.number().nullable().describe("Latest `reward/mean` reported (any actor)"),
    error: z.string().nullable().describe("Why the run failed or was cancelled"),
    cancelRequested: z.boolean(),
    url: z.string().describe("The run's page in the web UI (path)"),
  });
export type RunOut = z.infer<typeof RunOut>;

export const RunWithSpecOut = RunOut.extend({
  spec: z.unknown().describe("The frozen RunSpec, defaults filled, exactly as launched"),
});

export const RunListQuery = z
  .object({
    status: RunState.optional(),
    tag: RunTag.optional().describe("Only runs carrying this tag"),
    experimentId: Id.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: Id.optional().describe("`nextCursor` of the previous page"),
  })
  .strict();

export const RunListOut = z
  .object({ items: z.array(RunOut), nextCursor: z.string().nullable().describe("Pass as `cursor` for the next (older) page; null on the last") });

export const RunIdParams = z.object({ id: Id.describe("Run id") }).strict();

/** Long-poll cap: proxies and CI runners tolerate five minutes; the CLI loops for longer waits. */
export const MAX_WAIT_SECONDS = 300;
export const RunWaitQuery = z
  .object({
    timeout: z.coerce
      .number()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .default(30)
      .describe(`Seconds to wait at most (0..${MAX_WAIT_SECONDS}, default 30)`),
  })
  .strict();
export const RunWaitOut = z
  .object({
    run: RunOut,
    done: z.boolean().describe("True when the run has ended"),
    timedOut: z.boolean().describe("True when the timeout passed first (the run is still queued or running)"),
    waitedMs: z.number().int(),
  });

export const RunCancelOut = z
  .object({
    run: RunOut,
    outcome: z
      .enum(["cancelled", "requested"])
      .describe("`cancelled`: it was still queued and is cancelled now; `requested`: the runner was asked to stop it"),
  });

export const RunControlOut = z.object({
  run: RunOut,
  outcome: z
    .enum(["requested", "requeued"])
    .describe(
      "`requested`: the runner was asked and the run changes state at its next step boundary (use `/wait` or poll); " +
        "`requeued`: an ended run was queued again to resume from its latest checkpoint",
    ),
  fromStep: z.number().int().optional().describe("With `requeued`: the checkpoint step the new attempt continues after"),
});

// ---------- metrics ----------

export const MAX_BUCKETS = 10_000;
const commaList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0));

export const MetricsQuery = z
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
      .max(MAX_BUCKETS)
      .optional()
      .describe("Bucket each series into at most N points over its step range (value = last, with min and max); omitted: raw points"),
  })
  .strict();

export const MetricPointOut = z.object({
  step: z.number().int(),
  value: z.number().describe("The value (bucketed: the last value in the bucket)"),
  min: z.number(),
  max: z.number(),
});
export const MetricSeriesOut = z
  .object({
    name: z.string(),
    actor: z.string().describe('"" when the metric is not per actor'),
    total: z.number().int().describe("Points stored, before bucketing"),
    bucketed: z.boolean(),
    points: z.array(MetricPointOut),
  });
export const MetricsOut = z.object({ runId: z.string(), series: z.array(MetricSeriesOut) });
export type MetricsOut = z.infer<typeof MetricsOut>;
export const METRICS_CSV_HEADER = "name,actor,step,value,min,max";

// ---------- episodes ----------

export const EpisodesQuery = z
  .object({
    step: z.coerce.number().int().min(0).optional().describe("Only episodes of this step"),
    cursor: z
      .string()
      .regex(/^\d{1,10}$/, "must be a `nextCursor` from a previous page")
      .optional()
      .describe("`nextCursor` of the previous page"),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .strict();
export const EpisodeOut = z
  .object({
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
    ts: Timestamp,
  });
export const EpisodesOut = z
  .object({ items: z.array(EpisodeOut), nextCursor: z.string().nullable() });
export type EpisodesOut = z.infer<typeof EpisodesOut>;

// ---------- datasets ----------

/** One limit for every upload path (defined with the shared parser). */
export { MAX_DATASET_BYTES } from "../../datasets/server/parseDataset";
export const DatasetFormat = z.enum(["jsonl", "csv", "parquet"]);
export const DatasetUploadQuery = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/, "must be 1-100 letters, digits, _ . - (not starting with . or -)")
      .describe("Dataset name"),
    format: DatasetFormat.optional().describe(
      "`jsonl`, `csv` or `parquet`; default: from Content-Type (`application/jsonl`, `application/x-ndjson`, `text/csv`, `application/vnd.apache.parquet`)",
    ),
  })
  .strict();
export const DatasetOut = z
  .object({
    id: z.string(),
    name: z.string(),
    format: DatasetFormat,
    byteSize: z.number().int(),
    rowCount: z.number().int(),
    columns: z.array(z.string()),
    sha256: z.string(),
    createdAt: Timestamp,
  });
export type DatasetOut = z.infer<typeof DatasetOut>;

// ---------- health ----------

const CheckOut = z.object({ ok: z.boolean(), latencyMs: z.number(), error: z.string().optional() });
export const HealthOut = z
  .object({ status: z.enum(["ok", "degraded"]), checks: z.object({ postgres: CheckOut, redis: CheckOut }) });
