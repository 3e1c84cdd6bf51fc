import { QUEUES } from "@troupe/contracts";
import { createDb } from "@troupe/db";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { startControlSubscriber } from "./control/controlSubscriber";
import type { ActiveRun, RunnerContext } from "./context";
import type { RunnerEnv } from "./env";
import { GpuSlots } from "./gpus/gpuSlots";
import { consoleLog, type RunnerLog } from "./log";
import { createRunProcessor } from "./processor";
import { startRewardTestWorker } from "./rewardTest/rewardTestWorker";
import { startQueueReconciler } from "./queue/reconcile";
import { enqueueQueuedRun } from "./queue/runJobs";
import { startPresence, type Presence } from "./presence/presence";
import { recoverOwnRuns, startSweeper } from "./run/recovery";

export interface RunnerOptions {
  log?: RunnerLog;
  /** BullMQ key prefix; tests use their own so they never take another process's jobs. */
  queuePrefix?: string;
  childEnv?: Record<string, string>;
  /**
   * Put back the job of every run Postgres has as queued (default true). Tests that share a database
   * with other test files turn it off: those files' queued runs are not this runner's to take.
   */
  reconcileQueue?: boolean;
}

export interface Runner {
  ctx: RunnerContext;
  /** This runner's Runner row (presence heartbeat). */
  presence: Presence;
  worker: Worker;
  /**
   * A graceful stop (SIGTERM, a deploy): take no new jobs; ask every run to stop after its current
   * step with a checkpoint, and requeue each to resume on the next runner; after
   * TROUPE_SHUTDOWN_GRACE_MS, cancel the runs still going (`cancelRuns`); close connections.
   * Resolves once every run is stored and settled.
   */
  shutdown(reason: string): Promise<void>;
  /** The fallback: SIGTERM every run's runtime now (cancelled after its step; SIGKILL after TROUPE_CANCEL_GRACE_MS). */
  cancelRuns(reason: string): void;
}

/**
 * Wires one runner process: database and Redis clients, start-up recovery of this runner's
 * abandoned runs, the cancel subscriber, the stall sweeper and the BullMQ worker.
 *
 * BullMQ's stalled-job settings follow TROUPE_STALL_TIMEOUT_MS: a job's lock lasts that long
 * (renewed at half of it while the runner lives), so the queue re-delivers a dead runner's job
 * about when its heartbeat counts as stale, and the claim then fails the run with the reason.
 * One re-delivery is allowed (maxStalledCount 1). The queue reconciler puts back the job of any
 * run Postgres has as queued that Redis lost (see queue/reconcile.ts).
 */
export async function startRunner(env: RunnerEnv, options: RunnerOptions = {}): Promise<Runner> {
  const log = options.log ?? consoleLog(env.runnerId);
  const db = createDb(env.databaseUrl);
  const redis = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  redis.on("error", (error) => log.warn(`redis: ${error.message}`));
  const active = new Map<string, ActiveRun>();
  const ctx: RunnerContext = {
    db,
    redis,
    env,
    gpus: new GpuSlots(env.gpus),
    active,
    log,
    ...(options.childEnv ? { childEnv: options.childEnv } : {}),
  };

  const queueConnection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  queueConnection.on("error", (error) => log.warn(`redis (queue producer): ${error.message}`));
  const queue = new Queue(QUEUES.runs.name, { connection: queueConnection, ...(options.queuePrefix ? { prefix: options.queuePrefix } : {}) });
  queue.on("error", (error) => log.warn(`queue: ${error.message}`));
  ctx.enqueueRun = (runId) => enqueueQueuedRun(db, queue, runId);

  const recovered = await recoverOwnRuns(ctx);
  if (recovered > 0) log.info(`failed ${recovered} run(s) left running by a previous incarnation of this runner`);
  const control = await startControlSubscriber(env.redisUrl, active, log);
  const sweeper = startSweeper(ctx);
  const reconciler =
    options.reconcileQueue === false || env.requeueCheckMs === 0 ? null : startQueueReconciler(ctx, queue, options.queuePrefix ?? "bull");

  const shutdownController = new AbortController();
  const workerConnection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  workerConnection.on("error", (error) => log.warn(`redis (queue): ${error.message}`));
  const worker = new Worker(QUEUES.runs.name, createRunProcessor(ctx, shutdownController.signal), {
    connection: workerConnection,
    ...(options.queuePrefix ? { prefix: options.queuePrefix } : {}),
    concurrency: env.concurrency,
    lockDuration: env.stallTimeoutMs,
    stalledInterval: Math.max(1_000, Math.floor(env.stallTimeoutMs / 2)),
    maxStalledCount: 1,
    removeOnComplete: { count: 1_000 },
    removeOnFail: { count: 5_000 },
  });
  worker.on("error", (error) => log.error(`queue worker: ${error.message}`));
  // Reward tests (designer "Test" button) on their own queue and worker, never behind a training run.
  const rewardTests = startRewardTestWorker(env, log, {
    ...(options.queuePrefix ? { queuePrefix: options.queuePrefix } : {}),
    ...(options.childEnv ? { childEnv: options.childEnv } : {}),
  });
  worker.on("failed", (job, error) => log.error(`job ${job?.id ?? "?"} failed: ${error.message}`));
  // The Runner row: capabilities, GPUs and which run holds each, on a heartbeat (TROUPE_PRESENCE_MS).
  const presence = await startPresence(ctx);
  log.info(
    `runner ${env.runnerId} started: queue ${QUEUES.runs.name}, concurrency ${env.concurrency}, ${env.gpus} GPU(s), python ${env.python}, work dir ${env.workDir}`,
  );

  let closing: Promise<void> | null = null;
  let cancelling = false;
  const cancelRuns = (reason: string) => {
    if (cancelling) return;
    cancelling = true;
    log.warn(`cancelling ${active.size} running run(s) (${reason})`);
    for (const run of active.values()) run.requestStop("shutdown");
  };
  const shutdown = (reason: string) =>
    (closing ??= (async () => {
      log.info(
        `shutting down (${reason}): taking no new jobs, stopping ${active.size} running run(s) after their step with a checkpoint to resume on the next runner (cancelled if not done within ${env.shutdownGraceMs} ms)`,
      );
      shutdownController.abort();
      const workerClosed = worker.close();
      const rewardTestsClosed = rewardTests.close();
      for (const run of active.values()) run.requestHandOver();
      const grace = setTimeout(() => cancelRuns(`not stopped within TROUPE_SHUTDOWN_GRACE_MS=${env.shutdownGraceMs}`), env.shutdownGraceMs);
      try {
        await workerClosed;
      } finally {
        clearTimeout(grace);
      }
      await rewardTestsClosed;
      await presence.stop();
      await reconciler?.stop();
      await sweeper.stop();
      await control.close();
      await queue.close().catch(() => undefined);
      await queueConnection.quit().catch(() => queueConnection.disconnect());
      await redis.quit().catch(() => redis.disconnect());
      await workerConnection.quit().catch(() => workerConnection.disconnect());
      await db.$disconnect();
      log.info("runner stopped");
    })());

  return { ctx, presence, worker, shutdown, cancelRuns };
}
