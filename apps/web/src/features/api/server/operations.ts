import type { z } from "zod";
import {
  ApiAdvisoriesQuery,
  ApiAdvisoryList,
  ApiCollectBody,
  ApiCollectResult,
  ApiEpisodePage,
  ApiEpisodesQuery,
  ApiHealth,
  ApiLaunchBody,
  ApiMetrics,
  ApiMetricsQuery,
  ApiRunCancel,
  ApiRunControl,
  ApiRunDelete,
  ApiRunIdParams,
  ApiRunList,
  ApiRunListQuery,
  ApiRunWait,
  ApiRunWaitQuery,
  ApiRunWithSpec,
  MAX_WAIT_SECONDS,
  METRICS_CSV_HEADER,
  MULTI_AGENT_DEMO_SPEC_INPUT,
  RunSpec,
} from "@troupe/contracts";
import { stringify as toYaml } from "yaml";
import type { Role } from "../../auth/lib/roles";
import { DatasetOut, DatasetUploadQuery, MAX_DATASET_BYTES } from "./schemas";

/**
 * The route registry: every REST operation with its path, schemas and responses. Route handlers
 * (`app/api/v1/**`) are built from these entries by `apiRoute`, and `openapi.ts` renders the same
 * entries as the OpenAPI document, so the document cannot describe an API other than the one served.
 */

export const MAX_SPEC_BYTES = 1024 * 1024;

export interface ResponseDef {
  description: string;
  /** Body schema (JSON) or, for non-JSON bodies, a description of the text. */
  schema?: z.ZodType;
  contentType?: string;
  /** For non-JSON bodies (CSV): a JSON Schema of the text, e.g. `{ type: "string" }`. */
  rawSchema?: Record<string, unknown>;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
  /** Other media types of the same response (e.g. `text/csv`) → JSON Schema of the text. */
  alternatives?: Record<string, Record<string, unknown>>;
}

export interface RequestBodyDef {
  description: string;
  maxBytes: number;
  /** Media type → schema of the parsed body (JSON Schema `string` for raw uploads). */
  content: Record<string, { schema?: z.ZodType; rawSchema?: Record<string, unknown>; example?: unknown }>;
}

export interface OperationDef {
  operationId: string;
  method: "get" | "post" | "delete";
  /** OpenAPI path template under /api/v1, e.g. `/runs/{id}`. */
  path: string;
  tag: string;
  summary: string;
  description: string;
  /**
   * The least role of the token's owner (`false`: no token, e.g. health). Reads are `viewer`; what
   * launches, controls runs or stores data is `editor`.
   */
  auth: false | Role;
  pathParams?: z.ZodType;
  query?: z.ZodType;
  headers?: { name: string; description: string; schema: Record<string, unknown> }[];
  body?: RequestBodyDef;
  responses: Record<number, ResponseDef>;
}

const op = <T extends OperationDef>(def: T): T => def;

const yamlSpec = { schema: ApiLaunchBody };

/**
 * `POST /runs/{id}/<verb>`: an action on one run. Cancel, pause, resume and stop differ only in their
 * words and in what they answer; a 409 says why the run's state does not allow the action.
 */
function runActionOp<V extends string, S extends z.ZodType>(
  verb: V,
  def: { summary: string; description: string; answer: S; done: string; conflict: string },
) {
  return op({
    operationId: `${verb}Run` as const,
    method: "post",
    path: `/runs/{id}/${verb}` as const,
    tag: "runs",
    summary: def.summary,
    description: def.description,
    auth: "editor",
    pathParams: ApiRunIdParams,
    responses: {
      200: { description: def.done, schema: def.answer },
      409: { description: def.conflict },
    },
  });
}

export const operations = {
  health: op({
    operationId: "getHealth",
    method: "get",
    path: "/health",
    tag: "system",
    summary: "Health of the API and what it depends on",
    description: "Checks Postgres and Redis. No token needed: for load balancers and CI start-up checks.",
    auth: false,
    responses: {
      200: { description: "Postgres and Redis answer", schema: ApiHealth },
      503: { description: "A dependency does not answer; `checks` says which", schema: ApiHealth },
    },
  }),

  createRun: op({
    operationId: "createRun",
    method: "post",
    path: "/runs",
    tag: "runs",
    summary: "Launch a run from a RunSpec",
    description:
      "The body is a RunSpec, or `{ spec, experimentId?, priority?, tags? }`, as JSON or as YAML " +
      "(`Content-Type: application/yaml`). The run is created exactly as a launch from the web UI: the spec is " +
      "validated and frozen with its defaults, the run is queued (event seq 1) and enqueued for a runner. " +
      "Validation problems name every field (and, for YAML, its line and column). With an `Idempotency-Key` " +
      "header, a repeated request (same token, same key, same body, within 24 hours) returns the run the first " +
      "one created (header `Idempotent-Replayed: true`) instead of a second run; the same key with a different " +
      `body is a 409. Body limit: ${MAX_SPEC_BYTES} bytes (1 MiB).`,
    auth: "editor",
    headers: [
      {
        name: "Idempotency-Key",
        description: "Any string of 1-255 printable ASCII characters, e.g. the CI job id. Kept 24 hours, per token.",
        schema: { type: "string", minLength: 1, maxLength: 255 },
      },
    ],
    body: {
      description: "A RunSpec or a launch request",
      maxBytes: MAX_SPEC_BYTES,
      // A complete, valid RunSpec to start from: the seeded multi-agent demo (two actors, a round spec).
      content: {
        "application/json": { ...yamlSpec, example: MULTI_AGENT_DEMO_SPEC_INPUT },
        "application/yaml": { ...yamlSpec, example: toYaml(MULTI_AGENT_DEMO_SPEC_INPUT) },
      },
    },
    responses: {
      201: {
        description: "The run was created (or, with `Idempotent-Replayed: true`, created by an earlier request with this key)",
        schema: ApiRunWithSpec,
        headers: {
          Location: { description: "URL of the run", schema: { type: "string" } },
          "Idempotent-Replayed": { description: "`true` when an earlier request with the same key created the run", schema: { type: "string" } },
        },
      },
      409: { description: "The Idempotency-Key was used before with a different body" },
      415: { description: "Content-Type is neither JSON nor YAML" },
    },
  }),

  listRuns: op({
    operationId: "listRuns",
    method: "get",
    path: "/runs",
    tag: "runs",
    summary: "List runs, newest first",
    description: "Filters combine (AND). Cursor pagination: pass `nextCursor` as `cursor` until it is null.",
    auth: "viewer",
    query: ApiRunListQuery,
    responses: { 200: { description: "A page of runs", schema: ApiRunList } },
  }),

  getRun: op({
    operationId: "getRun",
    method: "get",
    path: "/runs/{id}",
    tag: "runs",
    summary: "One run, with its frozen spec",
    description: "Status, progress, latest reward, error and the spec exactly as launched.",
    auth: "viewer",
    pathParams: ApiRunIdParams,
    responses: { 200: { description: "The run", schema: ApiRunWithSpec } },
  }),

  deleteRun: op({
    operationId: "deleteRun",
    method: "delete",
    path: "/runs/{id}",
    tag: "runs",
    summary: "Delete an ended run and its stored data",
    description:
      "Removes the run and everything stored for it, in one transaction: its events (checkpoint records included), " +
      "metric points, memory samples, episodes, log lines and the Idempotency-Keys that created it. Other runs are " +
      "untouched (a run started from its checkpoints keeps its own data). A queued, running or paused run is a 409: " +
      "cancel it first. Not undone. The run's folder on the runner host that ran it (checkpoints, logs) is NOT removed: " +
      "the web app cannot reach that disk; the answer names the host (`runnerId`) and the folder (`workDir`).",
    auth: "editor",
    pathParams: ApiRunIdParams,
    responses: {
      200: { description: "Deleted; the answer says where its files remain", schema: ApiRunDelete },
      409: { description: "The run is queued, running or paused: cancel it first" },
    },
  }),

  waitRun: op({
    operationId: "waitRun",
    method: "get",
    path: "/runs/{id}/wait",
    tag: "runs",
    summary: "Long-poll until the run ends or the timeout passes",
    description:
      `Answers as soon as the run is succeeded, failed, cancelled or stopped, or after \`timeout\` seconds (at most ${MAX_WAIT_SECONDS}), ` +
      "whichever comes first; `done` and `timedOut` say which. The server polls the run's row twice a second " +
      "(one primary-key read), so the answer comes within about half a second of the end. Loop on `timedOut` to wait longer.",
    auth: "viewer",
    pathParams: ApiRunIdParams,
    query: ApiRunWaitQuery,
    responses: { 200: { description: "The run when it ended or when the timeout passed", schema: ApiRunWait } },
  }),

  runMetrics: op({
    operationId: "getRunMetrics",
    method: "get",
    path: "/runs/{id}/metrics",
    tag: "runs",
    summary: "Metric series, raw or bucketed, as JSON or CSV",
    description:
      "Raw points by default; `buckets=N` cuts each series' step range into N equal parts (server-side, the same " +
      `bucketing the charts use) keeping the last value with min and max. CSV columns: \`${METRICS_CSV_HEADER}\`, one row per point.`,
    auth: "viewer",
    pathParams: ApiRunIdParams,
    query: ApiMetricsQuery,
    responses: {
      200: {
        description: "The series (JSON), or the points as CSV with `format=csv`",
        schema: ApiMetrics,
        alternatives: { "text/csv": { type: "string", description: `CSV with header \`${METRICS_CSV_HEADER}\`` } },
      },
    },
  }),

  runEpisodes: op({
    operationId: "listRunEpisodes",
    method: "get",
    path: "/runs/{id}/episodes",
    tag: "runs",
    summary: "Episodes (transcripts) of a run, in event order",
    description: "Optionally of one step. Cursor pagination: pass `nextCursor` as `cursor` until it is null.",
    auth: "viewer",
    pathParams: ApiRunIdParams,
    query: ApiEpisodesQuery,
    responses: { 200: { description: "A page of episodes", schema: ApiEpisodePage } },
  }),

  runAdvisories: op({
    operationId: "listRunAdvisories",
    method: "get",
    path: "/runs/{id}/advisories",
    tag: "runs",
    summary: "Health advisories of a run",
    description:
      "What the runtime's health checks raised while the run trained (collapse, zero-variance groups, entropy collapse, " +
      "length explosion, truncation, KL blow-up, reward hacking, NaN/inf, staleness, a stalled actor), each with the " +
      "step, actor, severity, evidence (numbers, steps and the transcripts that show it) and a hint. " +
      "`troupe wait --fail-on-advisory` exits non-zero on them.",
    auth: "viewer",
    pathParams: ApiRunIdParams,
    query: ApiAdvisoriesQuery,
    responses: { 200: { description: "The run's advisories, oldest first", schema: ApiAdvisoryList } },
  }),

  cancelRun: runActionOp("cancel", {
    summary: "Cancel a queued or running run",
    description:
      "A queued run is cancelled at once (`outcome: cancelled`); a running one is asked to stop and ends as " +
      "`cancelled` after its current step (`outcome: requested`; use `/wait`). A run that already ended is a 409.",
    answer: ApiRunCancel,
    done: "Cancelled, or cancellation requested",
    conflict: "The run already ended",
  }),

  pauseRun: runActionOp("pause", {
    summary: "Pause a running run at its next step boundary",
    description:
      "The runtime finishes its current step, then waits; the run's status becomes `paused`. Nothing is lost: " +
      "`/resume` continues with the next step. The request is stored on the run, so a runner that is briefly " +
      "disconnected still applies it. A run that is not running is a 409.",
    answer: ApiRunControl,
    done: "Pause requested",
    conflict: "The run is not running (or changed state meanwhile)",
  }),

  resumeRun: runActionOp("resume", {
    summary: "Resume a paused run, or an ended one from its latest checkpoint",
    description:
      "A `paused` run continues with its next step (`outcome: requested`). A `stopped`, `failed` or `cancelled` run with a " +
      "checkpoint is queued again as a new attempt that continues from its latest checkpoint (`outcome: requeued`); " +
      "what the ended attempt stored for later steps is removed first, so no step has two values. Otherwise a 409 says why.",
    answer: ApiRunControl,
    done: "Resume requested, or the run was queued to resume from a checkpoint",
    conflict: "The run cannot be resumed (running, queued, succeeded, or ended without a checkpoint)",
  }),

  stopRun: runActionOp("stop", {
    summary: "Stop a running or paused run after its current step, with a checkpoint",
    description:
      "The runtime finishes its current step, writes a checkpoint and ends with status `stopped` (not `cancelled`: " +
      "nothing is thrown away; `/resume` continues it). The request is stored on the run, so a runner that is briefly " +
      "disconnected still applies it. A run that is not running or paused is a 409.",
    answer: ApiRunControl,
    done: "Stop requested",
    conflict: "The run is not running or paused (or changed state meanwhile)",
  }),

  collectRun: op({
    operationId: "collectRun",
    method: "post",
    path: "/runs/{id}/collect",
    tag: "runs",
    summary: "Save a finished run's good episodes as a dataset (prompt / completion columns)",
    description:
      "Every trained completion in the run's recorded episodes (`trainer.episodesPerStep` per step) whose episode " +
      "reward is at least its actor's threshold (`minRewardByActor`, else `minReward`) becomes a row " +
      "`{prompt, completion, actor, reward, step, environment, datasetRow, run}` of a new JSONL dataset in the " +
      "library; `datasetSpec` is the RunSpec `datasets[]` entry that reads it (an `sft` environment reads " +
      "`prompt` and `completion` by default). A run still going, a taken name, or no row at the threshold is a 422 " +
      "naming the field.",
    auth: "editor",
    pathParams: ApiRunIdParams,
    body: {
      description: "What to keep, and the new dataset's name",
      maxBytes: 64 * 1024,
      content: { "application/json": { schema: ApiCollectBody, example: { name: "good_answers", minReward: 0.5 } } },
    },
    responses: {
      201: { description: "Stored", schema: ApiCollectResult },
      404: { description: "No run has this id" },
    },
  }),

  uploadDataset: op({
    operationId: "uploadDataset",
    method: "post",
    path: "/datasets",
    tag: "datasets",
    summary: "Upload a dataset (JSONL, CSV or Parquet)",
    description:
      "The body is the file itself (`curl --data-binary @rows.jsonl`). JSONL: one JSON object per line (blank lines " +
      "are skipped). CSV (RFC 4180): a header row, then rows with as many fields. Parquet: any flat table. The whole file is checked before " +
      "anything is stored; the first malformed row is named by its line. Stored in one insert, so a failed upload " +
      `leaves nothing behind. Limit: ${MAX_DATASET_BYTES} bytes (10 MiB).`,
    auth: "editor",
    query: DatasetUploadQuery,
    body: {
      description: "The dataset file",
      maxBytes: MAX_DATASET_BYTES,
      content: {
        "application/jsonl": { rawSchema: { type: "string" } },
        "application/x-ndjson": { rawSchema: { type: "string" } },
        "text/csv": { rawSchema: { type: "string" } },
        "application/vnd.apache.parquet": { rawSchema: { type: "string", format: "binary" } },
      },
    },
    responses: {
      201: { description: "Stored", schema: DatasetOut },
      409: { description: "A dataset with this name exists already (names are RunSpec identifiers: two of one name could not sit in one spec)" },
      415: { description: "The format is neither given nor recognisable from Content-Type" },
    },
  }),
} satisfies Record<string, OperationDef>;

export type Operations = typeof operations;

/** Named components of the document: input schemas (as a caller writes them) and output schemas. */
export { RunSpec };
