import { TRPCError } from "@trpc/server";
import type { RunControlMessage, RunState } from "@troupe/contracts";
import { appendToStream, expireStream, transitionRun } from "@troupe/db";
import type { TRPCContext } from "../../../server/api/trpc";
import { publishRunControl } from "./controlChannel";

export type CancelOutcome = { status: RunState; outcome: "cancelled" | "requested" };

/**
 * Cancel a run.
 * - queued: the web owns it still, so it writes the `cancelled` event itself (only if the run is still
 *   queued: `transitionRun` is conditional) and removes the job from the queue.
 * - running: the runner owns its seqs, so we only ask: set `cancelRequestedAt` and publish a control
 *   message; the runner stops the process and writes the terminal event.
 * - terminal: nothing to cancel, say so.
 */
export async function cancelRun(ctx: TRPCContext, runId: string): Promise<CancelOutcome> {
  const run = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true } });
  if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${runId} not found` });

  if (run.status === "queued") {
    const event = await transitionRun(ctx.db, runId, {
      from: ["queued"],
      to: "cancelled",
      message: "cancelled by user before it started",
      error: "cancelled by user before it started",
    });
    if (event) {
      await appendToStream(ctx.redis, runId, [event]);
      await expireStream(ctx.redis, runId);
      // A runner that claims the job anyway finds the run cancelled and skips it; removal just keeps the queue tidy.
      await ctx.runQueue.remove(runId).catch(() => 0);
      return { status: "cancelled", outcome: "cancelled" };
    }
    // A runner claimed it between our read and the update: fall through to the running case.
  }

  const requested = await ctx.db.run.updateMany({
    where: { id: runId, status: { in: ["running", "paused"] } },
    data: { cancelRequestedAt: new Date() },
  });
  if (requested.count === 1) {
    const message: RunControlMessage = { runId, action: "cancel" };
    await publishRunControl(ctx.redis, message);
    const current = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true } });
    return { status: current?.status ?? "running", outcome: "requested" };
  }

  const now = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true } });
  throw new TRPCError({
    code: "PRECONDITION_FAILED",
    message: `run ${runId} already ended (${now?.status ?? "unknown"}); only queued, running or paused runs can be cancelled`,
  });
}
