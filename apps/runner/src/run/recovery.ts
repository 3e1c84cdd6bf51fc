import { readFileSync } from "node:fs";
import { errorLine } from "../io/dbRetry";
import type { RunnerContext } from "../context";
import { failAbandonedRun } from "./abandoned";
import { databaseUptimeMs, runLooksAlive } from "./liveness";

/**
 * Runs left `running` by a runner that is gone. Such a run is failed with the reason (never
 * restarted: see claim.ts). Two ways to find them:
 * - at start-up, runs marked running on THIS runner id are from a previous incarnation of this
 *   process (so each runner on a host needs its own TROUPE_RUNNER_ID); their runtime may even
 *   still be alive as an orphan holding the GPU, so it is killed first;
 * - periodically, runs of ANY runner whose heartbeat is older than TROUPE_STALL_TIMEOUT_MS and that
 *   show no other sign of life (see sweepStalledRuns).
 */
export async function recoverOwnRuns(ctx: RunnerContext): Promise<number> {
  const runs = await ctx.db.run.findMany({
    where: { status: { in: ["running", "paused"] }, runnerId: ctx.env.runnerId },
    select: { id: true, heartbeatAt: true, pid: true },
  });
  let failed = 0;
  for (const run of runs) {
    if (ctx.active.has(run.id)) continue;
    const orphan = run.pid !== null && killOrphanRuntime(run.pid, run.id);
    const at = run.heartbeatAt?.toISOString() ?? "an unknown time";
    const reason =
      `runner ${ctx.env.runnerId} restarted while the run was running (last heartbeat ${at}); the run was failed, not restarted` +
      (orphan ? `; its runtime (pid ${run.pid}) was still alive and was killed` : "");
    if (await failAbandonedRun(ctx, run.id, reason, { runnerId: ctx.env.runnerId, heartbeatAt: run.heartbeatAt })) failed += 1;
  }
  return failed;
}

/**
 * Fails runs whose runner stopped heartbeating. Not while the evidence could be an outage's doing:
 * Postgres up for less than a stall timeout (no heartbeat could be written while it was down), this
 * sweeper itself unable to reach it within the last stall timeout, or the run's Redis liveness key
 * still set (its runner is alive and only its Postgres writes fail).
 */
export async function sweepStalledRuns(ctx: RunnerContext, now = new Date(), outage: { lastFailureAt: number | null } = { lastFailureAt: null }): Promise<number> {
  if (outage.lastFailureAt !== null && now.getTime() - outage.lastFailureAt < ctx.env.stallTimeoutMs) return 0;
  if ((await databaseUptimeMs(ctx)) < ctx.env.stallTimeoutMs) return 0;
  const cutoff = new Date(now.getTime() - ctx.env.stallTimeoutMs);
  const runs = await ctx.db.run.findMany({
    where: {
      status: { in: ["running", "paused"] },
      OR: [{ heartbeatAt: { lt: cutoff } }, { heartbeatAt: null, startedAt: { lt: cutoff } }],
    },
    select: { id: true, runnerId: true, heartbeatAt: true, startedAt: true },
  });
  let failed = 0;
  for (const run of runs) {
    // Our own live runs are demonstrably alive (a missed beat means the database was away).
    if (ctx.active.has(run.id)) continue;
    if (await runLooksAlive(ctx, run.id)) continue;
    const at = (run.heartbeatAt ?? run.startedAt)?.toISOString() ?? "an unknown time";
    const reason = `runner ${run.runnerId ?? "(unknown)"} stopped heartbeating at ${at}`;
    if (await failAbandonedRun(ctx, run.id, reason, { runnerId: run.runnerId, heartbeatAt: run.heartbeatAt })) failed += 1;
  }
  return failed;
}

/** Sweeps every `intervalMs` (default: half the stall timeout, at most 30 s). */
export function startSweeper(ctx: RunnerContext, intervalMs = Math.min(30_000, Math.floor(ctx.env.stallTimeoutMs / 2))): { stop(): Promise<void> } {
  let inFlight: Promise<unknown> = Promise.resolve();
  const outage = { lastFailureAt: null as number | null };
  const timer = setInterval(() => {
    inFlight = inFlight.then(() =>
      sweepStalledRuns(ctx, new Date(), outage).catch((error: unknown) => {
        outage.lastFailureAt = Date.now();
        ctx.log.warn(`stall sweep failed: ${errorLine(error)}`);
      }),
    );
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
    },
  };
}

/**
 * Kills a previous incarnation's runtime if it is still running. The pid is only trusted when
 * the process's command line names this run (pids are reused); Linux only (/proc), else a no-op.
 */
export function killOrphanRuntime(pid: number, runId: string): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return false;
  }
  if (!cmdline.includes(runId) || !cmdline.includes("troupe")) return false;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
      return true;
    } catch {
      // not a group leader, or gone already: try the pid alone
    }
  }
  return false;
}
