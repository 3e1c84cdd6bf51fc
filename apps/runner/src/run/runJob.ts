import { join } from "node:path";
import { appendToStream, expireStream, transitionRun } from "@troupe/db";
import type { RunnerContext } from "../context";
import { claimRun } from "./claim";
import { materialiseRun, runFiles, SAFE_RUN_ID, type RunFiles } from "./materialise";
import { settleRun } from "./settle";
import { RunSupervisor, type SupervisionResult } from "./supervise";

type JobStatus = "succeeded" | "failed" | "cancelled" | "stopped" | "unknown";

export type JobResult =
  | { kind: "finished"; status: JobStatus }
  | { kind: "skipped"; reason: string }
  /** Not started because the runner is shutting down: the job goes back to the queue. */
  | { kind: "deferred"; reason: string };

/**
 * Everything one queue job does, in order: wait for GPU slots → claim → materialise → spawn
 * and supervise → settle. `shutdown` aborts a wait for GPUs (the job is deferred) and stops a
 * run that is claimed after the runner began shutting down.
 */
export async function runJob(ctx: RunnerContext, runId: string, shutdown?: AbortSignal): Promise<JobResult> {
  if (!SAFE_RUN_ID.test(runId)) return { kind: "skipped", reason: `invalid run id ${JSON.stringify(runId)}` };
  const row = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true, gpus: true, spec: true, resumeStep: true } });
  if (!row) return { kind: "skipped", reason: "run not found" };
  const files = runFiles(ctx.env.workDir, runId);
  // Not queued: let the claim explain (cancelled, finished, or a dead runner's run to fail).
  if (row.status !== "queued") return claimRun(ctx, runId, files.workDir) as Promise<JobResult>;
  if (shutdown?.aborted) return { kind: "deferred", reason: "runner is shutting down" };

  let gpuIds: number[];
  try {
    gpuIds = await ctx.gpus.acquire(row.gpus, shutdown);
  } catch (error) {
    if (shutdown?.aborted) return { kind: "deferred", reason: "runner is shutting down" };
    return failUnplaceable(ctx, runId, (error as Error).message);
  }

  try {
    const claim = await claimRun(ctx, runId, files.workDir);
    if (claim.kind !== "claimed") return claim;
    // A resumed run continues from its checkpoint, which the earlier attempt left in the same work folder.
    const resumeFrom = row.resumeStep !== null ? join(files.workDir, "checkpoints", `step-${row.resumeStep}`) : undefined;
    const status = await superviseClaimed(ctx, runId, files, row.spec, claim.seqStart, gpuIds, shutdown, resumeFrom);
    return { kind: "finished", status };
  } finally {
    ctx.gpus.release(gpuIds);
  }
}

async function superviseClaimed(
  ctx: RunnerContext,
  runId: string,
  files: RunFiles,
  spec: unknown,
  seqStart: number,
  gpuIds: number[],
  shutdown: AbortSignal | undefined,
  resumeFrom: string | undefined,
): Promise<JobStatus> {
  const supervisor = new RunSupervisor(ctx, { runId, ...files, seqStart, gpuIds, ...(resumeFrom ? { resumeFrom } : {}) });
  ctx.active.set(runId, supervisor);
  try {
    // A shutdown that began while this run was being claimed would not have seen it.
    if (shutdown?.aborted) supervisor.requestStop("shutdown");
    let result: SupervisionResult;
    try {
      await materialiseRun(files, spec, ctx.db);
      result = await supervisor.run();
    } catch (error) {
      result = {
        exit: null,
        terminalStatus: null,
        lastError: null,
        stopReason: null,
        killedAfterGrace: false,
        tail: "",
        runnerError: (error as Error).message,
      };
    }
    const outcome = await settleRun(ctx, runId, result);
    return outcome?.to ?? "unknown";
  } finally {
    ctx.active.delete(runId);
  }
}

/** A run that needs more GPUs than this host has can never start here: fail it with the reason. */
async function failUnplaceable(ctx: RunnerContext, runId: string, reason: string): Promise<JobResult> {
  const event = await transitionRun(ctx.db, runId, { from: ["queued"], to: "failed", message: reason, error: reason });
  if (!event) return { kind: "skipped", reason: "run is no longer queued" };
  ctx.log.runState(runId, "queued", "failed", reason);
  await appendToStream(ctx.redis, runId, [event]);
  await expireStream(ctx.redis, runId);
  return { kind: "finished", status: "failed" };
}
