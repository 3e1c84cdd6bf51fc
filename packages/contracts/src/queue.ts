import { z } from "zod";
import { RewardSpec } from "./runSpec";

/**
 * The typed job catalog on top of BullMQ (one place for queue names and payloads).
 * Producers (web) and consumers (runner) both import it, so a payload change is a type error
 * on both sides.
 */
export const QUEUES = {
  runs: {
    name: "troupe-runs",
    jobs: {
      /** Train or evaluate one run. The job id is the run id, so enqueueing twice is a no-op. */
      run: z.object({ runId: z.string().min(1), gpus: z.number().int().min(0).default(0) }).strict(),
    },
  },
  /**
   * Designer "Test" of a reward function: the runner runs it out of process (the runtime's reward
   * worker, with the reward's time and memory limits) and returns the job's result. Its own queue,
   * so a test is never stuck behind a training run.
   */
  rewardTests: {
    name: "troupe-reward-tests",
    jobs: {
      test: z
        .object({
          reward: RewardSpec,
          /** Keyword arguments of each call, e.g. `{prompt, completion, ...row}` (completion scope). */
          calls: z.array(z.record(z.string(), z.unknown())).min(1).max(64),
        })
        .strict(),
    },
  },
} as const;

export type RewardTestJob = z.infer<typeof QUEUES.rewardTests.jobs.test>;

/** One call's outcome: its score, or the error with its Python traceback; `seconds` of wall time. */
export const RewardTestCallResult = z.union([
  z.object({ score: z.number(), seconds: z.number() }).strict(),
  z.object({ error: z.string(), seconds: z.number() }).strict(),
]);
/** What a reward-test job returns (BullMQ return value). */
export const RewardTestResult = z
  .object({
    results: z.array(RewardTestCallResult),
    /** Wall time of the whole test on the runner, worker start-up included. */
    seconds: z.number(),
    runnerId: z.string(),
  })
  .strict();
export type RewardTestResult = z.infer<typeof RewardTestResult>;

export type RunJob = z.infer<typeof QUEUES.runs.jobs.run>;

/**
 * The BullMQ job id of a queued run's next attempt: the run id for a new run (attempt 0: it never ran),
 * `<run id>-attempt-<n + 1>` for one that ran n times (a job id is kept after its job ends, so each attempt
 * needs its own). Deterministic, so adding a run's job twice (web, runners, the queue reconciler) is a no-op.
 */
export const runJobId = (runId: string, attempt: number) => (attempt === 0 ? runId : `${runId}-attempt-${attempt + 1}`);

/**
 * BullMQ runs priority 1 first and keeps insertion order within one priority. Ours: a run's priority (0..100,
 * higher sooner), then a run that ran before (a deploy handed it back, or it resumes from a checkpoint) ahead
 * of new runs of the same priority, since it came first; then first come. `queuedRunOrder` is the same order
 * for the pages that list the queue.
 */
export const runJobPriority = (run: { priority: number; attempt: number }) => 2 * (101 - run.priority) - (run.attempt > 0 ? 1 : 0);

/** Every producer of a run job adds it with these options (web launch, REST, resume; runner hand-back, reconciler). */
export function runJobOptions(run: { id: string; priority: number; attempt: number }) {
  return { jobId: runJobId(run.id, run.attempt), priority: runJobPriority(run), removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } };
}

/** The queue's order, for a list of queued runs read from Postgres (see runJobPriority). */
export function queuedRunOrder(a: { priority: number; attempt: number; createdAt: Date }, b: { priority: number; attempt: number; createdAt: Date }): number {
  return runJobPriority(a) - runJobPriority(b) || a.createdAt.getTime() - b.createdAt.getTime();
}

/**
 * Redis pub/sub channel on which the web asks runners to act on a running run. Pub/sub ignores the
 * database index (SELECT), unlike the queue and the event streams, so the channel names it: two
 * installs sharing one Redis server on different indexes (REDIS_URL `/N`) never hear each other.
 */
export const runControlChannel = (redisDb: number) => `troupe:db${redisDb}:run-control`;
/** `cancel` ends the process (SIGTERM); the others are forwarded to its control channel. */
export const RUN_CONTROL_ACTIONS = ["cancel", "pause", "resume", "stop_after_step"] as const;
export const RunControlMessage = z
  .object({ runId: z.string().min(1), action: z.enum(RUN_CONTROL_ACTIONS) })
  .strict();
export type RunControlMessage = z.infer<typeof RunControlMessage>;
