import { QUEUES, type RewardTestResult } from "@troupe/contracts";
import { Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import type { RunnerEnv } from "../env";
import type { RunnerLog } from "../log";
import { runRewardTest } from "./runRewardTest";

/** Tests are small and short; a few at once keep the designer responsive without starving runs. */
const REWARD_TEST_CONCURRENCY = 2;

/**
 * The runner's second BullMQ worker, on its own queue (`troupe-reward-tests`): a reward test never
 * waits behind a training run. The job's return value is the result the web is waiting for; a
 * failure message (bad payload, Python missing) becomes the job's failedReason.
 */
export function startRewardTestWorker(
  env: Pick<RunnerEnv, "redisUrl" | "python" | "runnerId">,
  log: RunnerLog,
  options: { queuePrefix?: string; childEnv?: Record<string, string> } = {},
): { worker: Worker; close(): Promise<void> } {
  const connection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  connection.on("error", (error) => log.warn(`redis (reward tests): ${error.message}`));
  const schema = QUEUES.rewardTests.jobs.test;
  const worker = new Worker<unknown, RewardTestResult>(
    QUEUES.rewardTests.name,
    async (job: Job<unknown>) => {
      const payload = schema.parse(job.data);
      const started = Date.now();
      const result = await runRewardTest(env.python, payload, env.runnerId, { ...process.env, ...options.childEnv });
      log.info(`reward test ${job.id}: ${payload.calls.length} call(s) of "${payload.reward.name}" in ${Date.now() - started} ms`);
      return result;
    },
    {
      connection,
      ...(options.queuePrefix ? { prefix: options.queuePrefix } : {}),
      concurrency: REWARD_TEST_CONCURRENCY,
      // Results are read once by the waiting request; keep a few for debugging, not forever.
      removeOnComplete: { age: 600, count: 200 },
      removeOnFail: { age: 3600, count: 500 },
    },
  );
  worker.on("error", (error) => log.error(`reward-test worker: ${error.message}`));
  return {
    worker,
    async close() {
      await worker.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
