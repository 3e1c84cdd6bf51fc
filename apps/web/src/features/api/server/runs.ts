import { isTerminal, type ApiRun, type ApiRunList, type ApiRunWait, type ApiRunWithSpec, type RunState } from "@troupe/contracts";
import type { Prisma } from "@troupe/db";
import type { Db } from "../../../server/db";
import { lastRewards, totalStepsOf } from "../../runs/server/summaries";
import { ApiError } from "./problem";

/** Reading runs for the REST API: one select, one mapping to the documented `Run` shape. */

export const apiRunSelect = {
  id: true,
  name: true,
  displayName: true,
  status: true,
  source: true,
  experimentId: true,
  experiment: { select: { name: true } },
  priority: true,
  gpus: true,
  gpuIds: true,
  tags: true,
  seed: true,
  specVersion: true,
  createdAt: true,
  startedAt: true,
  finishedAt: true,
  lastStep: true,
  spec: true,
  error: true,
  cancelRequestedAt: true,
} satisfies Prisma.RunSelect;

type ApiRunRow = Prisma.RunGetPayload<{ select: typeof apiRunSelect }>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toApiRun(row: ApiRunRow, lastReward: number | null): ApiRun {
  return {
    id: row.id,
    // The run's own readable name; the spec's name (shared by its re-runs) beside it.
    name: row.displayName,
    specName: row.name,
    status: row.status,
    terminal: isTerminal(row.status as RunState),
    source: row.source,
    experimentId: row.experimentId,
    experimentName: row.experiment?.name ?? null,
    priority: row.priority,
    gpus: row.gpus,
    gpuIds: row.gpuIds,
    tags: row.tags,
    seed: row.seed,
    specVersion: row.specVersion,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    lastStep: row.lastStep,
    totalSteps: totalStepsOf(row.spec),
    lastReward,
    error: row.error,
    cancelRequested: row.cancelRequestedAt !== null,
    url: `/runs/${encodeURIComponent(row.id)}`,
  };
}

export async function findApiRun(db: Db, runId: string): Promise<ApiRunWithSpec | null> {
  const row = await db.run.findUnique({ where: { id: runId }, select: apiRunSelect });
  if (!row) return null;
  const rewards = await lastRewards(db, [row.id]);
  return { ...toApiRun(row, rewards.get(row.id) ?? null), spec: row.spec };
}

export async function requireApiRun(db: Db, runId: string): Promise<ApiRunWithSpec> {
  const run = await findApiRun(db, runId);
  if (!run) throw ApiError.notFound(`run ${runId} not found`);
  return run;
}

/** The run as the control and cancel answers show it: without its (large) spec. */
export async function requireApiRunWithoutSpec(db: Db, runId: string): Promise<ApiRun> {
  const { spec: _spec, ...run } = await requireApiRun(db, runId);
  return run;
}

/** Newest first; the cursor is the id of the last run of the previous page. */
export async function listApiRuns(
  db: Db,
  filter: { status?: RunState; tag?: string; experimentId?: string; limit: number; cursor?: string },
): Promise<ApiRunList> {
  if (filter.cursor) {
    const exists = await db.run.findUnique({ where: { id: filter.cursor }, select: { id: true } });
    if (!exists) throw ApiError.validation([{ path: "cursor", message: "is not a run id from a previous page" }], "invalid query parameters");
  }
  const rows = await db.run.findMany({
    where: {
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.tag ? { tags: { has: filter.tag } } : {}),
      ...(filter.experimentId ? { experimentId: filter.experimentId } : {}),
    },
    select: apiRunSelect,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: filter.limit + 1,
    ...(filter.cursor ? { cursor: { id: filter.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, filter.limit);
  const rewards = await lastRewards(db, page.map((r) => r.id));
  return {
    items: page.map((r) => toApiRun(r, rewards.get(r.id) ?? null)),
    nextCursor: rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

export const WAIT_POLL_MS = 500;

/**
 * Long-poll: read the run's status (one primary-key read) every WAIT_POLL_MS until it is terminal,
 * the timeout passes or the client goes away. Polling the row rather than blocking on the run's
 * Redis stream keeps one waiting CI job from holding a Redis connection for minutes, and sees the
 * end even when the stream has expired.
 */
export async function waitForRun(
  db: Db,
  runId: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ApiRunWait> {
  const started = Date.now();
  for (;;) {
    const row = await db.run.findUnique({ where: { id: runId }, select: { status: true } });
    if (!row) throw ApiError.notFound(`run ${runId} not found`);
    const waited = Date.now() - started;
    const done = isTerminal(row.status as RunState);
    if (done || waited >= timeoutMs || signal.aborted) {
      const run = await requireApiRunWithoutSpec(db, runId);
      return { run, done: run.terminal, timedOut: !run.terminal, waitedMs: waited };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(WAIT_POLL_MS, timeoutMs - waited)));
  }
}
