import type { RunnerContext } from "../context";

export interface HeartbeatHandlers {
  /** The run row has cancelRequestedAt set (the fallback when the pub/sub message was missed). */
  onCancelRequested(): void;
  /** The run row holds a pause / resume / stop-after-step not yet taken (a missed pub/sub message). */
  onControlRequested(): void;
  /** The row is no longer `running` on this runner (someone else ended it). */
  onLost(): void;
}

/**
 * Writes `heartbeatAt` every `env.heartbeatMs` while the run is ours, and reads back
 * `cancelRequestedAt` and `controlRequest` in the same statement. A failed write (database briefly away) is logged
 * and retried on the next beat; the stall sweeper tolerates TROUPE_STALL_TIMEOUT_MS of silence.
 */
export function startHeartbeat(ctx: RunnerContext, runId: string, handlers: HeartbeatHandlers): { stop(): Promise<void> } {
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();

  const beat = async () => {
    try {
      const rows = await ctx.db.run.updateManyAndReturn({
        where: { id: runId, status: { in: ["running", "paused"] }, runnerId: ctx.env.runnerId },
        data: { heartbeatAt: new Date() },
        select: { cancelRequestedAt: true, controlRequest: true },
      });
      if (stopped) return;
      const row = rows[0];
      if (!row) handlers.onLost();
      else if (row.cancelRequestedAt) handlers.onCancelRequested();
      else if (row.controlRequest) handlers.onControlRequested();
    } catch (error) {
      ctx.log.warn(`run=${runId} heartbeat failed: ${(error as Error).message}`);
    }
  };

  const timer = setInterval(() => {
    inFlight = inFlight.then(beat);
  }, ctx.env.heartbeatMs);

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}
