import { ApiEpisodePage, ApiHealth, ApiLaunchEnvelope, ApiMetrics, ApiRunCancel, ApiRunControl, ApiRunDelete, ApiRunList, ApiRunWait, ApiRunWithSpec, RunSpec } from "@troupe/contracts";
import { ApiCollectBody, ApiCollectResult } from "@troupe/contracts";
import { cancelRun } from "../../runs/server/cancel";
import { deleteRun } from "../../runs/server/deleteRun";
import { collectFromRun } from "../../runs/server/collect";
import { runSourceIssues } from "../../runs/server/runSources";
import { controlRun, resumeFromCheckpoint } from "../../runs/server/control";
import { mediaType, readBodyBytes } from "./body";
import { assertDatasetNameFree, formatFromMediaType, parseDataset, storeDataset } from "./datasets";
import { listApiEpisodes } from "./episodes";
import { apiRoute, jsonResponse } from "./handler";
import { launchFromApi } from "./launch";
import { datasetLaunchIssues } from "../../datasets/server/datasetLaunchIssues";
import { loadApiMetrics, metricsToCsv } from "./metrics";
import { operations } from "./operations";
import { ApiError } from "./problem";
import { listApiRuns, requireApiRun, requireApiRunWithoutSpec, waitForRun } from "./runs";
import { DatasetOut } from "./schemas";
import { readSpecBody } from "./specBody";
import { launchIssuesOf } from "../../runs/lib/launchCheck";
import { runnerLaunchIssues } from "../../runners/server/offers";
import { checkHealth } from "../../health/server/health";

/** The REST handlers, one per registry entry; `app/api/v1/**` route files only re-export them. */

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export const getHealth = apiRoute(operations.health, async ({ ctx }) => {
  const report = await checkHealth(ctx.db, ctx.redis);
  return jsonResponse(ApiHealth, report, report.status === "ok" ? 200 : 503);
});

export const createRun = apiRoute(operations.createRun, async ({ request, ctx, token }) => {
  const key = request.headers.get("idempotency-key") ?? undefined;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw ApiError.validation([{ path: "Idempotency-Key", message: "must be 1-255 printable ASCII characters without spaces" }], "invalid header");
  }
  const body = await readSpecBody(request, operations.createRun.body.maxBytes);
  const isEnvelope = typeof body.value === "object" && body.value !== null && !Array.isArray(body.value) && "spec" in body.value;
  let launch;
  if (isEnvelope) {
    const parsed = ApiLaunchEnvelope.safeParse(body.value);
    if (!parsed.success) throw ApiError.validation(body.issues(parsed.error), "invalid launch request");
    launch = { spec: parsed.data.spec, experimentId: parsed.data.experimentId, priority: parsed.data.priority ?? 0, tags: parsed.data.tags ?? [] };
  } else {
    const parsed = RunSpec.safeParse(body.value);
    if (!parsed.success) throw ApiError.validation(body.issues(parsed.error), "invalid run spec");
    launch = { spec: parsed.data, priority: 0, tags: [] };
  }
  // The same check as the UI's launch (round specs, reward code), before anything is stored.
  // ...and against the live runners (vLLM, DeepSpeed, GPUs, Ray, …), as the UI's launch does.
  const issues = launchIssuesOf(launch.spec);
  if (issues.length === 0) issues.push(...(await runnerLaunchIssues(ctx.db, launch.spec)));
  // Actors that start from another run's checkpoint: that run, step and actor must exist (runSources.ts).
  if (issues.length === 0) issues.push(...(await runSourceIssues(ctx.db, launch.spec)));
  // Stored datasets that do not exist, prompt fields naming no column: the UI launch's own check.
  if (issues.length === 0) issues.push(...(await datasetLaunchIssues(ctx.db, launch.spec)));
  if (issues.length > 0) {
    throw ApiError.validation(
      issues.map((i) => ({ path: isEnvelope ? `spec.${i.path}` : i.path, message: i.message })),
      "the spec cannot run",
    );
  }
  const { runId, replayed } = await launchFromApi(ctx, launch, { tokenId: token.tokenId, idempotencyKey: key });
  const run = await requireApiRun(ctx.db, runId);
  return jsonResponse(ApiRunWithSpec, run, 201, {
    location: `/api/v1/runs/${encodeURIComponent(runId)}`,
    ...(replayed ? { "idempotent-replayed": "true" } : {}),
  });
});

export const listRuns = apiRoute(operations.listRuns, async ({ ctx, query }) =>
  jsonResponse(ApiRunList, await listApiRuns(ctx.db, query)),
);

export const getRun = apiRoute(operations.getRun, async ({ ctx, params }) =>
  jsonResponse(ApiRunWithSpec, await requireApiRun(ctx.db, params.id)),
);

export const deleteRunHandler = apiRoute(operations.deleteRun, async ({ ctx, params }) =>
  jsonResponse(ApiRunDelete, await deleteRun(ctx, params.id)),
);

export const waitRun = apiRoute(operations.waitRun, async ({ request, ctx, params, query }) =>
  jsonResponse(ApiRunWait, await waitForRun(ctx.db, params.id, query.timeout * 1000, request.signal)),
);

export const getRunMetrics = apiRoute(operations.runMetrics, async ({ ctx, params, query }) => {
  await requireApiRun(ctx.db, params.id);
  const metrics = await loadApiMetrics(ctx.db, params.id, query);
  if (query.format === "csv") {
    return new Response(metricsToCsv(metrics), {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="run-${params.id.replace(/[^A-Za-z0-9_-]/g, "_")}-metrics.csv"`,
        "cache-control": "no-store",
      },
    });
  }
  return jsonResponse(ApiMetrics, metrics);
});

export const listRunEpisodes = apiRoute(operations.runEpisodes, async ({ ctx, params, query }) => {
  await requireApiRun(ctx.db, params.id);
  return jsonResponse(ApiEpisodePage, await listApiEpisodes(ctx.db, params.id, query));
});

export const cancelRunHandler = apiRoute(operations.cancelRun, async ({ ctx, params }) => {
  const { outcome } = await cancelRun(ctx, params.id);
  const run = await requireApiRunWithoutSpec(ctx.db, params.id);
  return jsonResponse(ApiRunCancel, { run, outcome });
});

export const pauseRunHandler = apiRoute(operations.pauseRun, async ({ ctx, params }) => {
  const { outcome } = await controlRun(ctx, params.id, "pause");
  const run = await requireApiRunWithoutSpec(ctx.db, params.id);
  return jsonResponse(ApiRunControl, { run, outcome });
});

export const stopRunHandler = apiRoute(operations.stopRun, async ({ ctx, params }) => {
  const { outcome } = await controlRun(ctx, params.id, "stop_after_step");
  const run = await requireApiRunWithoutSpec(ctx.db, params.id);
  return jsonResponse(ApiRunControl, { run, outcome });
});

/** One verb for both kinds of resume: a paused run continues, an ended one restarts from its checkpoint. */
export const resumeRunHandler = apiRoute(operations.resumeRun, async ({ ctx, params }) => {
  const current = await requireApiRun(ctx.db, params.id);
  if (current.status === "paused") {
    const { outcome } = await controlRun(ctx, params.id, "resume");
    const run = await requireApiRunWithoutSpec(ctx.db, params.id);
    return jsonResponse(ApiRunControl, { run, outcome });
  }
  const { outcome, fromStep } = await resumeFromCheckpoint(ctx, params.id);
  const run = await requireApiRunWithoutSpec(ctx.db, params.id);
  return jsonResponse(ApiRunControl, { run, outcome, fromStep });
});

export const collectRunHandler = apiRoute(operations.collectRun, async ({ request, ctx, params }) => {
  const body = await readSpecBody(request, operations.collectRun.body.maxBytes);
  const parsed = ApiCollectBody.safeParse(body.value);
  if (!parsed.success) throw ApiError.validation(body.issues(parsed.error), "invalid collect request");
  return jsonResponse(ApiCollectResult, await collectFromRun(ctx.db, params.id, parsed.data), 201);
});

export const uploadDataset = apiRoute(operations.uploadDataset, async ({ request, ctx, query }) => {
  const type = mediaType(request);
  const format = query.format ?? formatFromMediaType(type);
  if (!format) {
    throw new ApiError(
      415,
      "unsupportedMediaType",
      `cannot tell the dataset format from Content-Type ${type ?? "(none)"}: send text/csv, application/jsonl or application/vnd.apache.parquet, or pass ?format=jsonl|csv|parquet`,
    );
  }
  await assertDatasetNameFree(ctx.db, query.name);
  const bytes = await readBodyBytes(request, operations.uploadDataset.body.maxBytes);
  const parsed = await parseDataset(format, bytes);
  return jsonResponse(DatasetOut, await storeDataset(ctx.db, { name: query.name, format, bytes, parsed }), 201);
});
