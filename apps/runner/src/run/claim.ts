import { appendToStream, transitionRun } from "@troupe/db";
import type { RunnerContext } from "../context";
import { failAbandonedRun } from "./abandoned";
import { runLooksAlive } from "./liveness";

export type ClaimResult =
  | { kind: "claimed"; seqStart: number }
  | { kind: "skipped"; reason: string };

/**
 * Claims a queued run for this runner: queued → running with runnerId, startedAt, heartbeatAt,
 * attempt + 1, the work folder and the GPUs granted, and the `running` status event (seq = lastSeq + 1). The
 * runtime then numbers its events from the next seq.
 *
 * When the run is not queued:
 * - cancelled / finished / missing → skipped;
 * - running on a runner that stopped heartbeating (BullMQ re-delivered the job of a dead runner),
 *   or on this runner's id but not supervised by this process (a previous incarnation) → the run
 *   is FAILED with the reason, not restarted: its steps, metrics and seqs would restart from
 *   scratch on top of the dead attempt's. Re-running it is one click for the user;
 * - running elsewhere with a fresh heartbeat → skipped (a duplicate delivery).
 */
export async function claimRun(ctx: RunnerContext, runId: string, workDir: string, gpuIds: readonly number[] = []): Promise<ClaimResult> {
  const now = new Date();
  const { runnerId } = ctx.env;
  const event = await transitionRun(ctx.db, runId, {
    from: ["queued"],
    to: "running",
    message: `claimed by runner ${runnerId}`,
    // gpuIds: the runner's own GPU indices it holds, for the run page (issue #25).
    extra: { runnerId, startedAt: now, heartbeatAt: now, attempt: { increment: 1 }, workDir, pid: null, gpuIds: [...gpuIds] },
    now,
  });
  if (event) {
    ctx.log.runState(runId, "queued", "running", `runner ${runnerId}, seq ${event.seq}`);
    try {
      await appendToStream(ctx.redis, runId, [event]);
    } catch (error) {
      ctx.log.warn(`run=${runId} could not append to its stream: ${(error as Error).message}`);
    }
    return { kind: "claimed", seqStart: event.seq + 1 };
  }
  return explainUnclaimable(ctx, runId, now);
}

async function explainUnclaimable(ctx: RunnerContext, runId: string, now: Date): Promise<ClaimResult> {
  const row = await ctx.db.run.findUnique({
    where: { id: runId },
    select: { status: true, runnerId: true, heartbeatAt: true, startedAt: true },
  });
  if (!row) return { kind: "skipped", reason: "run not found" };
  if (row.status !== "running" && row.status !== "paused") return { kind: "skipped", reason: `run is ${row.status}` };

  const lastSign = row.heartbeatAt ?? row.startedAt;
  const staleBefore = new Date(now.getTime() - ctx.env.stallTimeoutMs);
  const ours = row.runnerId === ctx.env.runnerId;
  if (ours && ctx.active.has(runId)) return { kind: "skipped", reason: "already supervised by this runner" };
  // A stale heartbeat with a live Redis key is a runner cut off from Postgres, not a dead one.
  if (!ours && lastSign && lastSign < staleBefore && (await runLooksAlive(ctx, runId))) {
    return { kind: "skipped", reason: `running on runner ${row.runnerId}, which is alive (its Postgres heartbeat is late)` };
  }
  if (ours || !lastSign || lastSign < staleBefore) {
    const at = lastSign ? lastSign.toISOString() : "an unknown time";
    const reason = ours
      ? `runner ${row.runnerId} restarted while the run was running (last heartbeat ${at}); the run was failed, not restarted`
      : `runner ${row.runnerId ?? "(unknown)"} stopped heartbeating at ${at}; the queue re-delivered the job and the run was failed, not restarted`;
    await failAbandonedRun(ctx, runId, reason, { runnerId: row.runnerId, heartbeatAt: row.heartbeatAt });
    return { kind: "skipped", reason };
  }
  return { kind: "skipped", reason: `already running on runner ${row.runnerId}` };
}
