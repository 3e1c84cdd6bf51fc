import type { RuntimeControlCommandName } from "@troupe/contracts";
import type { RunnerContext } from "../context";

/**
 * Takes the pause / resume / stop-after-step stored on a run this runner owns (`Run.controlRequest`,
 * written by the web before it publishes) and clears it, compare-and-set on the request's time: of a
 * pub/sub message, a duplicate of it and the heartbeat's read, exactly one gets the command, so it is
 * applied once. Returns the command, or null when there is none (or another caller took it).
 */
export async function takeControlRequest(ctx: Pick<RunnerContext, "db" | "env">, runId: string): Promise<RuntimeControlCommandName | null> {
  const row = await ctx.db.run.findFirst({
    where: { id: runId, runnerId: ctx.env.runnerId, controlRequest: { not: null } },
    select: { controlRequest: true, controlRequestedAt: true },
  });
  if (!row?.controlRequest) return null;
  const taken = await ctx.db.run.updateMany({
    where: { id: runId, runnerId: ctx.env.runnerId, controlRequest: row.controlRequest, controlRequestedAt: row.controlRequestedAt },
    data: { controlRequest: null },
  });
  return taken.count === 1 ? row.controlRequest : null;
}
