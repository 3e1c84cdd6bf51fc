import { QUEUES } from "@troupe/contracts";
import { errorLine } from "../io/dbRetry";
import type { Queue } from "bullmq";
import type { RunnerContext } from "../context";
import { ensureRunJob } from "./runJobs";

/**
 * Postgres is the truth about which runs wait; Redis can lose the queue (FLUSHALL, a restart without
 * persistence, an eviction). The reconciler puts every `queued` run's job back:
 * - at start-up;
 * - within TROUPE_REQUEUE_CHECK_MS (2 s) of Redis losing its data: a sentinel key written after
 *   each pass is checked that often, and a pass runs as soon as it is missing;
 * - every TROUPE_REQUEUE_SWEEP_MS (60 s) in any case (a job lost some other way, or a job that
 *   failed while its run stayed queued).
 * Idempotent (the job id is derived from the run), so any number of runners may do it at once.
 */
export function startQueueReconciler(ctx: RunnerContext, queue: Queue, prefix = "bull"): { stop(): Promise<void>; pass(): Promise<number> } {
  const sentinel = `${prefix}:${QUEUES.runs.name}:troupe-reconciled`;
  let inFlight: Promise<unknown> = Promise.resolve();
  let lastPass = 0;
  let failing = false;

  const pass = async (why: string): Promise<number> => {
    const runs = await ctx.db.run.findMany({
      where: { status: "queued" },
      select: { id: true, attempt: true, gpus: true, priority: true },
      orderBy: { createdAt: "asc" },
    });
    let restored = 0;
    for (const run of runs) {
      const result = await ensureRunJob(queue, run);
      if (result !== "present") {
        restored += 1;
        ctx.log.info(`run=${run.id} queued in Postgres without a live job (${why}): ${result === "added" ? "job added" : "finished job replaced"}`);
      }
    }
    await ctx.redis.set(sentinel, new Date().toISOString());
    lastPass = Date.now();
    if (restored > 0) ctx.log.info(`requeued ${restored} of ${runs.length} queued run(s) (${why})`);
    return restored;
  };

  const tick = async () => {
    try {
      const missing = (await ctx.redis.exists(sentinel)) === 0;
      if (missing) await pass(lastPass === 0 ? "runner start" : "Redis lost the queue's data");
      else if (Date.now() - lastPass >= ctx.env.requeueSweepMs) await pass("periodic check");
      if (failing) ctx.log.info("queue check works again");
      failing = false;
    } catch (error) {
      if (!failing) ctx.log.warn(`queue check failed (retrying every ${ctx.env.requeueCheckMs} ms): ${errorLine(error)}`);
      failing = true;
    }
  };

  inFlight = pass("runner start").catch((error: unknown) => ctx.log.warn(`requeue at start failed (will retry): ${errorLine(error)}`));
  const timer = setInterval(() => {
    inFlight = inFlight.then(tick);
  }, ctx.env.requeueCheckMs);

  return {
    pass: () => pass("requested"),
    async stop() {
      clearInterval(timer);
      await inFlight;
    },
  };
}
