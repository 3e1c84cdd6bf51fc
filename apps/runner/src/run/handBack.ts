import { appendToStream, rewindRunAfterStep, transitionRun } from "@troupe/db";
import type { RunnerContext } from "../context";
import { errorLine, retryWhileDatabaseUnavailable } from "../io/dbRetry";
import { latestCheckpointOnDisk } from "./diskCheckpoints";

/**
 * A run stopped after its step for a runner shutdown goes back to the queue to resume, instead of
 * ending: running/paused → queued in one transition (its `queued` status event says why and from
 * which step), with `resumeStep` = the newest checkpoint on disk, after forgetting anything stored
 * for later steps (normally nothing: the runtime stops right after the checkpoint's step). Then its
 * job is added (idempotent; if Redis is away, any runner's queue reconciler adds it later).
 *
 * Returns false when the run may not be requeued (a cancel was asked meanwhile, or it is no longer
 * ours): the caller then settles it as usual.
 */
export async function handBackRun(ctx: RunnerContext, runId: string, workDir: string, logTail: string | null): Promise<boolean> {
  const retry = <T>(what: string, fn: () => Promise<T>) =>
    retryWhileDatabaseUnavailable(fn, {
      giveUpAfterMs: ctx.env.dbRetryMs,
      onRetry: (error, attempt, delayMs) =>
        ctx.log.warn(`run=${runId} ${what}: Postgres unavailable (attempt ${attempt}, next in ${delayMs} ms): ${errorLine(error)}`),
    });
  const row = await retry("hand-back", () =>
    ctx.db.run.findUnique({ where: { id: runId }, select: { resumeStep: true, cancelRequestedAt: true, runnerId: true, status: true } }),
  );
  if (!row || row.cancelRequestedAt || row.runnerId !== ctx.env.runnerId || (row.status !== "running" && row.status !== "paused")) return false;

  const checkpoint = latestCheckpointOnDisk(workDir);
  const step = checkpoint?.step ?? row.resumeStep;
  if (checkpoint) await retry("rewind", () => rewindRunAfterStep(ctx.db, runId, checkpoint.step));
  const message =
    step === null
      ? `runner ${ctx.env.runnerId} shut down before the run started; requeued for the next runner`
      : `runner ${ctx.env.runnerId} shut down; requeued to resume from the checkpoint of step ${step} on the next runner`;
  const event = await retry("requeue", () =>
    transitionRun(ctx.db, runId, {
      from: ["running", "paused"],
      to: "queued",
      message,
      error: null,
      logTail,
      where: { runnerId: ctx.env.runnerId, cancelRequestedAt: null },
      extra: { resumeStep: step, pid: null, heartbeatAt: null, controlRequest: null, finishedAt: null },
    }),
  );
  if (!event) return false;
  ctx.log.runState(runId, "running", "queued", message);
  try {
    await appendToStream(ctx.redis, runId, [event]);
  } catch (error) {
    ctx.log.warn(`run=${runId} could not append to its stream: ${errorLine(error)}`);
  }
  if (ctx.enqueueRun) {
    try {
      await ctx.enqueueRun(runId);
    } catch (error) {
      ctx.log.warn(`run=${runId} could not add its job (a queue reconciler will): ${errorLine(error)}`);
    }
  }
  return true;
}
