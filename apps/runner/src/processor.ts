import { QUEUES, type RunJob } from "@troupe/contracts";
import { DelayedError, UnrecoverableError, type Job, type Processor } from "bullmq";
import type { RunnerContext } from "./context";
import { runJob, type JobResult } from "./run/runJob";

/** How long a job deferred by a shutting-down runner waits before another runner may take it. */
const DEFER_MS = 1_000;

/**
 * The BullMQ processor: validates the payload and hands the run to `runJob`. A run that fails
 * is a normal result (its state is on the Run row), not a job failure; only a bad payload or an
 * infrastructure error fails the job.
 */
export function createRunProcessor(ctx: RunnerContext, shutdown: AbortSignal): Processor<RunJob, JobResult> {
  return async (job: Job<RunJob, JobResult>, token?: string) => {
    const payload = QUEUES.runs.jobs.run.safeParse(job.data);
    if (!payload.success) {
      const issue = payload.error.issues[0]!;
      throw new UnrecoverableError(`invalid ${QUEUES.runs.name} job ${job.id}: ${issue.path.join(".") || "payload"}: ${issue.message}`);
    }
    const result = await runJob(ctx, payload.data.runId, shutdown);
    if (result.kind === "skipped") ctx.log.info(`run=${payload.data.runId} job skipped: ${result.reason}`);
    if (result.kind === "deferred") {
      ctx.log.info(`run=${payload.data.runId} job handed back to the queue: ${result.reason}`);
      await job.moveToDelayed(Date.now() + DEFER_MS, token);
      throw new DelayedError();
    }
    return result;
  };
}
