import { createHash } from "node:crypto";
import { QUEUES, runJobOptions, type RunJob, type RunSpec, type StatusEvent } from "@troupe/contracts";
import { appendToStream, Prisma, transitionRun } from "@troupe/db";
import type { TRPCContext } from "../../../server/api/trpc";
import { gpusFor } from "../../runs/server/createRun";
import { ApiError } from "./problem";

/**
 * Launch a validated RunSpec through the REST API, the same way the web UI's launch does
 * (`features/experiments/server/launch.ts`: frozen spec with defaults, seq-1 `queued` event in the same
 * transaction, the event appended to the run's stream, a BullMQ job whose id is the run id), with
 * `source: api` and an optional Idempotency-Key stored in that same transaction.
 *
 * An adapter, because the UI's `launchRun` starts from an experiment id and its stored spec; the steps
 * after validation are the same and are kept in the same order here.
 */

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface ApiLaunch {
  spec: RunSpec;
  experimentId?: string;
  priority: number;
  tags: string[];
}

/** JSON with sorted keys, so the same request hashes the same however its keys were ordered. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Hash of the normalised request: the parsed spec (defaults filled) and the options, whatever the encoding. */
export function requestHash(launch: ApiLaunch): string {
  return createHash("sha256").update(canonical(launch)).digest("hex");
}

async function enqueue(ctx: TRPCContext, runId: string, gpus: number, priority: number): Promise<void> {
  const job: RunJob = QUEUES.runs.jobs.run.parse({ runId, gpus });
  // Same job id as the run: adding it again (an idempotent replay) is a no-op for BullMQ.
  await ctx.runQueue.add("run", job, runJobOptions({ id: runId, priority, attempt: 0 }));
}

type Replay = { runId: string; replayed: true };

/** The run an earlier request with this key created, a 409 for another body, or null (key free). */
async function replayOf(ctx: TRPCContext, tokenId: string, key: string, hash: string): Promise<Replay | null> {
  const existing = await ctx.db.idempotencyKey.findUnique({ where: { tokenId_key: { tokenId, key } } });
  if (!existing) return null;
  const expired = Date.now() - existing.createdAt.getTime() > IDEMPOTENCY_TTL_MS;
  const run = expired ? null : await ctx.db.run.findUnique({ where: { id: existing.runId }, select: { id: true, status: true, gpus: true, priority: true } });
  if (!run) {
    // Expired, or its run was deleted: the key is free again.
    await ctx.db.idempotencyKey.deleteMany({ where: { tokenId, key, createdAt: existing.createdAt } });
    return null;
  }
  if (existing.requestHash !== hash) {
    throw new ApiError(
      409,
      "conflict",
      `Idempotency-Key "${key}" was already used with a different request body (run ${run.id}); use a new key for a new run`,
    );
  }
  // The first request may have died between its commit and its enqueue: make sure a queued run has its job.
  if (run.status === "queued") await enqueue(ctx, run.id, run.gpus, run.priority);
  return { runId: run.id, replayed: true };
}

export async function launchFromApi(
  ctx: TRPCContext,
  launch: ApiLaunch,
  options: { tokenId: string; idempotencyKey?: string },
): Promise<{ runId: string; replayed: boolean }> {
  const hash = requestHash(launch);
  const key = options.idempotencyKey;
  if (key) {
    const replay = await replayOf(ctx, options.tokenId, key, hash);
    if (replay) return replay;
  }
  if (launch.experimentId) {
    const experiment = await ctx.db.experiment.findUnique({ where: { id: launch.experimentId }, select: { id: true } });
    if (!experiment) {
      throw ApiError.validation([{ path: "experimentId", message: `experiment ${launch.experimentId} not found` }]);
    }
  }
  const tags = [...new Set([...launch.spec.tags, ...launch.tags])];
  const spec: RunSpec = { ...launch.spec, tags };
  const gpus = gpusFor(spec);
  const queued: StatusEvent = { seq: 1, ts: Date.now(), type: "status", state: "queued", message: "queued from the REST API" };

  let runId: string;
  try {
    runId = await ctx.db.$transaction(async (tx) => {
      const run = await tx.run.create({
        data: {
          experimentId: launch.experimentId ?? null,
          name: spec.name,
          spec: spec as object,
          specVersion: spec.specVersion,
          seed: spec.seed,
          status: "queued",
          source: "api",
          priority: launch.priority,
          gpus,
          tags,
          lastSeq: 1,
          events: { create: [{ seq: queued.seq, type: queued.type, ts: new Date(queued.ts), payload: queued as object }] },
        },
        select: { id: true },
      });
      if (key) await tx.idempotencyKey.create({ data: { tokenId: options.tokenId, key, requestHash: hash, runId: run.id } });
      return run.id;
    });
  } catch (error) {
    // A concurrent request with the same key won the race: its run is the answer (or a 409).
    if (key && error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
      const replay = await replayOf(ctx, options.tokenId, key, hash);
      if (replay) return replay;
    }
    throw error;
  }

  try {
    await appendToStream(ctx.redis, runId, [queued]);
    await enqueue(ctx, runId, gpus, launch.priority);
  } catch (error) {
    // Without a job no runner will ever claim it: fail the run visibly instead of leaving it queued forever.
    const message = `could not enqueue the run: ${error instanceof Error ? error.message : String(error)}`;
    await transitionRun(ctx.db, runId, { from: ["queued"], to: "failed", message, error: message }).catch(() => null);
    throw new ApiError(503, "unavailable", "could not enqueue the run (is Redis up?); the run was marked failed");
  }
  return { runId, replayed: false };
}
