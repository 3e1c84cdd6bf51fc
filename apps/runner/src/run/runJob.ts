import { claimOnRunner, storedGpuClaim } from "@troupe/contracts";
import { appendToStream, expireStream, rewindRunAfterStep, transitionRun } from "@troupe/db";
import type { RunnerContext } from "../context";
import { errorLine, retryWhileDatabaseUnavailable } from "../io/dbRetry";
import { betterRunnerFor } from "../presence/placement";
import { claimRun } from "./claim";
import { latestCheckpointOnDisk } from "./diskCheckpoints";
import { handBackRun } from "./handBack";
import { startHeartbeat } from "./heartbeat";
import { materialiseRun, runFiles, SAFE_RUN_ID, type RunFiles } from "./materialise";
import { settleRun } from "./settle";
import { RunSupervisor, type SupervisionResult } from "./supervise";
import { join } from "node:path";

type JobStatus = "succeeded" | "failed" | "cancelled" | "stopped" | "queued" | "unknown";

export type JobResult =
  | { kind: "finished"; status: JobStatus }
  | { kind: "skipped"; reason: string }
  /** Not started because the runner is shutting down: the job goes back to the queue. */
  | { kind: "deferred"; reason: string };

/**
 * Everything one queue job does, in order: wait for GPU slots → claim → materialise → spawn
 * and supervise → settle (or hand back to the queue). `shutdown` aborts a wait for GPUs (the job
 * is deferred) and hands back a run that is claimed after the runner began shutting down.
 */
export async function runJob(ctx: RunnerContext, runId: string, shutdown?: AbortSignal): Promise<JobResult> {
  if (!SAFE_RUN_ID.test(runId)) return { kind: "skipped", reason: `invalid run id ${JSON.stringify(runId)}` };
  const row = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true, gpus: true, spec: true, resumeStep: true } });
  if (!row) return { kind: "skipped", reason: "run not found" };
  const files = runFiles(ctx.env.workDir, runId);
  // Not queued: let the claim explain (cancelled, finished, or a dead runner's run to fail).
  if (row.status !== "queued") return claimRun(ctx, runId, files.workDir) as Promise<JobResult>;
  if (shutdown?.aborted) return { kind: "deferred", reason: "runner is shutting down" };
  const better = await betterRunnerFor(ctx, { spec: row.spec, gpus: row.gpus }).catch(() => null);
  if (better) return { kind: "deferred", reason: `this runner cannot run it and runner ${better} can` };

  // The spec says how it claims this runner's GPUs (contracts gpuClaim.ts): none, the placement's own
  // indices, or one per model up to what this runner has ("auto": none on a CPU-only runner).
  const onHere = claimOnRunner(storedGpuClaim(row.spec, row.gpus), ctx.gpus.total);
  if ("refused" in onHere) return failUnplaceable(ctx, runId, onHere.refused);
  let gpuIds: number[];
  try {
    gpuIds = await ctx.gpus.acquire(onHere.count, shutdown, runId, onHere.ids);
  } catch (error) {
    if (shutdown?.aborted) return { kind: "deferred", reason: "runner is shutting down" };
    return failUnplaceable(ctx, runId, errorLine(error));
  }

  try {
    const claim = await claimRun(ctx, runId, files.workDir, gpuIds);
    if (claim.kind !== "claimed") return claim;
    const resumeFrom = row.resumeStep !== null ? await resumeFolder(ctx, runId, files.workDir, row.resumeStep) : undefined;
    const status = await superviseClaimed(ctx, runId, files, row.spec, claim.seqStart, gpuIds, shutdown, resumeFrom);
    return { kind: "finished", status };
  } finally {
    ctx.gpus.release(gpuIds);
  }
}

/**
 * The checkpoint a resumed run continues from: the newest one on disk in its work folder, which may
 * be later than the `resumeStep` Postgres recorded (a checkpoint written while Postgres was away has
 * no event). Steps stored after it are forgotten first, as the web's resume does for `resumeStep`.
 * With nothing on disk, the recorded step's folder is passed and the runtime says it is missing (the
 * work folder is per host: a run resumes where its checkpoints are, see the README).
 */
async function resumeFolder(ctx: RunnerContext, runId: string, workDir: string, recorded: number): Promise<string> {
  const onDisk = latestCheckpointOnDisk(workDir);
  if (!onDisk || onDisk.step <= recorded) return join(workDir, "checkpoints", `step-${recorded}`);
  ctx.log.info(`run=${runId} resuming from the checkpoint of step ${onDisk.step} found on disk (Postgres recorded step ${recorded})`);
  await rewindRunAfterStep(ctx.db, runId, onDisk.step);
  await ctx.db.run.updateMany({ where: { id: runId }, data: { resumeStep: onDisk.step } });
  return onDisk.path;
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
  // From the claim until the run is settled: final writes that wait out a Postgres outage are still a live run.
  const heartbeat = startHeartbeat(ctx, runId, {
    onCancelRequested: () => supervisor.requestStop("cancel"),
    onControlRequested: () => void supervisor.applyRequestedControl(),
    onLost: () => supervisor.requestStop("lost"),
  });
  try {
    // A shutdown that began while this run was being claimed would not have seen it.
    if (shutdown?.aborted) supervisor.requestHandOver();
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
        runnerError: errorLine(error),
      };
    }
    if (result.handedOver && (await handBackRun(ctx, runId, files.workDir, result.tail === "" ? null : result.tail))) return "queued";
    const outcome = await retryWhileDatabaseUnavailable(() => settleRun(ctx, runId, result), {
      giveUpAfterMs: ctx.env.dbRetryMs,
      onRetry: (error, attempt, delayMs) =>
        ctx.log.warn(`run=${runId} final status not written, Postgres unavailable (attempt ${attempt}, next in ${delayMs} ms): ${errorLine(error)}`),
    });
    return outcome?.to ?? "unknown";
  } finally {
    await heartbeat.stop();
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
