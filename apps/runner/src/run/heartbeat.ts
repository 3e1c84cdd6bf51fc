import type { RunnerContext } from "../context";
import { errorLine } from "../io/dbRetry";
import { clearRunAlive, markRunAlive } from "./liveness";

export interface HeartbeatHandlers {
  /** The run row has cancelRequestedAt set (the fallback when the pub/sub message was missed). */
  onCancelRequested(): void;
  /** The run row holds a pause / resume / stop-after-step not yet taken (a missed pub/sub message). */
  onControlRequested(): void;
  /** The row is no longer `running` on this runner (someone else ended it). */
  onLost(): void;
}

/**
 * Every `env.heartbeatMs` while the run is ours: sets the run's liveness key in Redis (see
 * liveness.ts), then writes `heartbeatAt` and reads back `cancelRequestedAt` and `controlRequest` in
 * the same statement. A failed write (database away) is logged once per outage and retried on the
 * next beat; other runners' stall sweepers see the Redis key meanwhile and leave the run alone.
 * It beats from the claim until the run is settled, not only while the process lives: a run whose
 * final writes wait out an outage is still ours.
 */
export function startHeartbeat(ctx: RunnerContext, runId: string, handlers: HeartbeatHandlers): { stop(): Promise<void> } {
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();
  let failing = false;
  let redisFailing = false;

  const beat = async () => {
    try {
      await markRunAlive(ctx, runId);
      redisFailing = false;
    } catch (error) {
      // Once per outage: the beat goes on every few seconds.
      if (!redisFailing) ctx.log.warn(`run=${runId} could not set its liveness key in Redis (retrying every beat): ${errorLine(error)}`);
      redisFailing = true;
    }
    try {
      const rows = await ctx.db.run.updateManyAndReturn({
        where: { id: runId, status: { in: ["running", "paused"] }, runnerId: ctx.env.runnerId },
        data: { heartbeatAt: new Date() },
        select: { cancelRequestedAt: true, controlRequest: true },
      });
      if (failing) ctx.log.info(`run=${runId} heartbeat written again`);
      failing = false;
      if (stopped) return;
      const row = rows[0];
      if (!row) handlers.onLost();
      else if (row.cancelRequestedAt) handlers.onCancelRequested();
      else if (row.controlRequest) handlers.onControlRequested();
    } catch (error) {
      if (!failing) ctx.log.warn(`run=${runId} heartbeat failed (retrying every ${ctx.env.heartbeatMs} ms): ${errorLine(error)}`);
      failing = true;
    }
  };

  void (inFlight = beat());
  const timer = setInterval(() => {
    inFlight = inFlight.then(beat);
  }, ctx.env.heartbeatMs);

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
      await clearRunAlive(ctx, runId).catch(() => undefined);
    },
  };
}
