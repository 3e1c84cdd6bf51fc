import { appendToStream, expireStream, transitionRun } from "@troupe/db";
import type { RunnerContext } from "../context";
import { decideOutcome, type Outcome, type OutcomeFacts } from "./outcome";

/**
 * Ends a supervised run: decides its final state, moves it running → that state (writing the
 * status event only when the runtime did not send one), stores the log tail on the Run row in
 * every case, and lets its live stream expire.
 */
export async function settleRun(ctx: RunnerContext, runId: string, facts: Omit<OutcomeFacts, "runnerId" | "cancelRequested" | "cancelGraceMs">): Promise<Outcome | null> {
  const row = await ctx.db.run.findUnique({ where: { id: runId }, select: { cancelRequestedAt: true } });
  const outcome = decideOutcome({
    ...facts,
    runnerId: ctx.env.runnerId,
    cancelRequested: Boolean(row?.cancelRequestedAt),
    cancelGraceMs: ctx.env.cancelGraceMs,
  });
  const logTail = facts.tail === "" ? null : facts.tail;
  const event = await transitionRun(ctx.db, runId, {
    from: ["running", "paused"],
    to: outcome.to,
    message: outcome.message,
    error: outcome.error,
    logTail,
    where: { runnerId: ctx.env.runnerId },
    ...(outcome.recordedEvent ? { recordedEvent: outcome.recordedEvent } : {}),
  });
  if (!event) {
    const now = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true, runnerId: true } });
    // Our own earlier try committed but its answer was lost (the connection broke): it is settled.
    if (now?.status === outcome.to && now.runnerId === ctx.env.runnerId) return outcome;
    // Someone else ended it meanwhile (the stall sweeper, an operator); keep its state, add the tail.
    await ctx.db.run.updateMany({ where: { id: runId }, data: { logTail } });
    ctx.log.warn(`run=${runId} was no longer running on this runner when its runtime ended; left its state as is`);
    return null;
  }
  ctx.log.runState(runId, "running", outcome.to, outcome.error ?? outcome.message);
  try {
    if (!outcome.recordedEvent) await appendToStream(ctx.redis, runId, [event]);
    await expireStream(ctx.redis, runId);
  } catch (error) {
    ctx.log.warn(`run=${runId} could not append to its stream: ${(error as Error).message}`);
  }
  return outcome;
}
