import { QUEUES, type RunJob } from "@troupe/contracts";
import type { Db } from "@troupe/db";
import type { Queue } from "bullmq";

/**
 * The BullMQ job id of a queued run's next attempt, as the web gives it: the run id for a new run
 * (attempt 0), `<run id>-attempt-<n>` for a resumed one (a job id is kept after it completes, so each
 * attempt needs its own). Deterministic, so adding a run's job twice (web and runner, two runners)
 * is a no-op.
 */
export const queuedJobId = (runId: string, attempt: number) => (attempt === 0 ? runId : `${runId}-attempt-${attempt + 1}`);

/** BullMQ runs priority 1 first; ours is "higher is sooner", 0..100 (same as the web's createRun). */
export const queuePriority = (priority: number) => 101 - priority;

/** States in which a job will still be (or is being) processed. */
const LIVE_STATES = new Set(["waiting", "delayed", "prioritized", "active", "waiting-children"]);

export type EnsureResult = "present" | "added" | "replaced";

/**
 * Makes sure a queued run has a job that will be processed: nothing when it has one; a new job when
 * it has none (Redis lost it); a fresh one when its job already completed or failed while the run
 * is still queued (e.g. the claim hit a database outage).
 */
export async function ensureRunJob(queue: Queue, run: { id: string; attempt: number; gpus: number; priority: number }): Promise<EnsureResult> {
  const jobId = queuedJobId(run.id, run.attempt);
  const state = await queue.getJobState(jobId);
  if (LIVE_STATES.has(state)) return "present";
  if (state === "completed" || state === "failed") await queue.remove(jobId);
  const job: RunJob = QUEUES.runs.jobs.run.parse({ runId: run.id, gpus: run.gpus });
  await queue.add("run", job, {
    jobId,
    priority: queuePriority(run.priority),
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 1000 },
  });
  return state === "unknown" ? "added" : "replaced";
}

/** `ensureRunJob` for a run read from Postgres (only when it is queued). */
export async function enqueueQueuedRun(db: Db, queue: Queue, runId: string): Promise<EnsureResult | null> {
  const run = await db.run.findFirst({ where: { id: runId, status: "queued" }, select: { id: true, attempt: true, gpus: true, priority: true } });
  return run ? ensureRunJob(queue, run) : null;
}
