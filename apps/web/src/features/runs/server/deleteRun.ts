import { TRPCError } from "@trpc/server";
import { runEventStreamKey, TERMINAL_STATES, type RunDeleted, type RunState } from "@troupe/contracts";
import type { TRPCContext } from "../../../server/api/trpc";

/**
 * Delete an ended run with everything stored for it, in one transaction: the Run row, and through
 * its foreign keys (ON DELETE CASCADE) its events (checkpoint records included), metric points and
 * rollups, memory samples and rollups, episodes and log lines; plus the Idempotency-Keys that named
 * it (they have no foreign key). Then its Redis stream and any job left in the queue.
 *
 * A queued, running or paused run is refused (cancel it first): its runner owns it and would keep
 * writing events for a row that is gone. The state is checked again by the DELETE itself, so a run
 * re-queued (resume) between the read and the delete is not removed.
 *
 * The run's folder on its runner host (checkpoints, logs) is not removed: the web app cannot reach
 * that disk and the runner has no command for it. The answer names the folder and the host.
 */
export async function deleteRun(ctx: TRPCContext, runId: string): Promise<RunDeleted> {
  const run = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true, displayName: true, runnerId: true, workDir: true } });
  if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${runId} not found` });
  const refuse = (status: RunState) =>
    new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `run ${run.displayName} is ${status}: cancel it first (only a run that has ended can be deleted)`,
    });
  if (!TERMINAL_STATES.includes(run.status)) throw refuse(run.status);

  const deleted = await ctx.db.$transaction(async (tx) => {
    const gone = await tx.run.deleteMany({ where: { id: runId, status: { in: [...TERMINAL_STATES] } } });
    if (gone.count === 0) return false;
    await tx.idempotencyKey.deleteMany({ where: { runId } });
    return true;
  });
  if (!deleted) {
    const now = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true } });
    if (!now) throw new TRPCError({ code: "NOT_FOUND", message: `run ${runId} not found` });
    throw refuse(now.status);
  }
  // Tidying only: the rows are what readers use, and an ended run's stream expires within the hour anyway.
  await ctx.redis.del(runEventStreamKey(runId)).catch(() => 0);
  await ctx.runQueue.remove(runId).catch(() => 0);
  return { id: runId, name: run.displayName, runnerId: run.runnerId, workDir: run.workDir };
}
