import { appendToStream, expireStream, transitionRun, type Prisma } from "@troupe/db";
import type { RunnerContext } from "../context";

/**
 * Fails a `running` run whose runner is gone, with the reason in Run.error and the status
 * event. `guard` holds the facts the decision was made on (e.g. "its heartbeat is still the
 * stale one we read"), so a runner that comes back to life in between wins the race.
 * Returns whether this call failed it.
 */
export async function failAbandonedRun(
  ctx: RunnerContext,
  runId: string,
  reason: string,
  guard: Prisma.RunWhereInput,
): Promise<boolean> {
  const event = await transitionRun(ctx.db, runId, { from: ["running", "paused"], to: "failed", message: reason, error: reason, where: guard });
  if (!event) return false;
  ctx.log.runState(runId, "running", "failed", reason);
  try {
    await appendToStream(ctx.redis, runId, [event]);
    await expireStream(ctx.redis, runId);
  } catch (error) {
    // Postgres has the event; live viewers get it from their next backfill.
    ctx.log.warn(`run=${runId} could not append to its stream: ${(error as Error).message}`);
  }
  return true;
}
