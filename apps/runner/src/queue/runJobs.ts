import { QUEUES, runJobId, runJobOptions, type RunJob } from "@troupe/contracts";
import type { Db } from "@troupe/db";
import type { Queue } from "bullmq";

/** States in which a job will still be (or is being) processed. */
const LIVE_STATES = new Set(["waiting", "delayed", "prioritized", "active", "waiting-children"]);

export type EnsureResult = "present" | "added" | "replaced";

/**
 * Makes sure a queued run has a job that will be processed: nothing when it has one; a new job when
 * it has none (Redis lost it); a fresh one when its job already completed or failed while the run
 * is still queued (e.g. the claim hit a database outage).
 */
export async function ensureRunJob(queue: Queue, run: { id: string; attempt: number; gpus: number; priority: number }): Promise<EnsureResult> {
  const jobId = runJobId(run.id, run.attempt);
  const state = await queue.getJobState(jobId);
  if (LIVE_STATES.has(state)) return "present";
  if (state === "completed" || state === "failed") await queue.remove(jobId);
  const job: RunJob = QUEUES.runs.jobs.run.parse({ runId: run.id, gpus: run.gpus });
  await queue.add("run", job, runJobOptions(run));
  return state === "unknown" ? "added" : "replaced";
}

/** `ensureRunJob` for a run read from Postgres (only when it is queued). */
export async function enqueueQueuedRun(db: Db, queue: Queue, runId: string): Promise<EnsureResult | null> {
  const run = await db.run.findFirst({ where: { id: runId, status: "queued" }, select: { id: true, attempt: true, gpus: true, priority: true } });
  return run ? ensureRunJob(queue, run) : null;
}
