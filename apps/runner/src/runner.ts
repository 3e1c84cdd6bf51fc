import { QUEUES } from "@troupe/contracts";
import { createDb } from "@troupe/db";
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { startControlSubscriber } from "./control/controlSubscriber";
import type { ActiveRun, RunnerContext } from "./context";
import type { RunnerEnv } from "./env";
import { GpuSlots } from "./gpus/gpuSlots";
import { consoleLog, type RunnerLog } from "./log";
import { createRunProcessor } from "./processor";
import { startRewardTestWorker } from "./rewardTest/rewardTestWorker";
import { recoverOwnRuns, startSweeper } from "./run/recovery";

export interface RunnerOptions {
  log?: RunnerLog;
  /** BullMQ key prefix; tests use their own so they never take another process's jobs. */
  queuePrefix?: string;
  childEnv?: Record<string, string>;
}

export interface Runner {
  ctx: RunnerContext;
  worker: Worker;
  /** Stop taking jobs, SIGTERM the runtimes, wait for them to end and be stored, close connections. */
  shutdown(reason: string): Promise<void>;
}

/**
 * Wires one runner process: database and Redis clients, start-up recovery of this runner's
 * abandoned runs, the cancel subscriber, the stall sweeper and the BullMQ worker.
 *
 * BullMQ's stalled-job settings follow TROUPE_STALL_TIMEOUT_MS: a job's lock lasts that long
 * (renewed at half of it while the runner lives), so the queue re-delivers a dead runner's job
 * about when its heartbeat counts as stale, and the claim then fails the run with the reason.
 * One re-delivery is allowed (maxStalledCount 1).
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

  const recovered = await recoverOwnRuns(ctx);
  if (recovered > 0) log.info(`failed ${recovered} run(s) left running by a previous incarnation of this runner`);
  const control = await startControlSubscriber(env.redisUrl, active, log);
  const sweeper = startSweeper(ctx);

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
  log.info(
    `runner ${env.runnerId} started: queue ${QUEUES.runs.name}, concurrency ${env.concurrency}, ${env.gpus} GPU(s), python ${env.python}, work dir ${env.workDir}`,
  );

  let closing: Promise<void> | null = null;
  const shutdown = (reason: string) =>
    (closing ??= (async () => {
      log.info(`shutting down (${reason}): taking no new jobs, stopping ${active.size} running run(s)`);
      shutdownController.abort();
      const workerClosed = worker.close();
      const rewardTestsClosed = rewardTests.close();
      for (const run of active.values()) run.requestStop("shutdown");
      await workerClosed;
      await rewardTestsClosed;
      await sweeper.stop();
      await control.close();
      await redis.quit().catch(() => redis.disconnect());
      await workerConnection.quit().catch(() => workerConnection.disconnect());
      await db.$disconnect();
      log.info("runner stopped");
    })());

  return { ctx, worker, shutdown };
}
