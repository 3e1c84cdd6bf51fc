import { TRPCError } from "@trpc/server";
import { badRequest } from "../../../server/api/trpc";
import { QUEUES, runJobOptions, type RunJob, type RunSpec, type StatusEvent } from "@troupe/contracts";
import { appendToStream, transitionRun } from "@troupe/db";
import type { TRPCContext } from "../../../server/api/trpc";
import { assertStoredDatasetsExist } from "../../datasets/server/storedDatasets";
import { assertRunSourcesExist } from "./runSources";
import { launchIssuesOf } from "../lib/launchCheck";
import { runnerLaunchIssues } from "../../runners/server/offers";

import { claimedGpusIssue, gpusFor } from "../lib/gpusFor";

export { gpusFor };

/**
 * The GPUs a run claims: what its placement needs, or another count when the launcher asks (more, to keep a
 * whole node for it; fewer or none for an unplaced "auto" run, whose models then share GPUs or train on the
 * CPU). Fewer than the placement names, or any for a run on the CPU, is refused at `gpus`.
 */
export function claimedGpus(spec: RunSpec, requested: number | undefined): number {
  const issue = claimedGpusIssue(spec, requested);
  if (issue) throw badRequest([issue], "invalid launch");
  return requested ?? gpusFor(spec);
}

/**
 * Store a run with a frozen, already validated spec and its seq-1 `queued` event (one transaction),
 * append the event to the run's stream and enqueue the job; a failed enqueue fails the run visibly.
 * The one path every launch takes: the UI's launch, a re-run and the REST API.
 */
export async function createQueuedRun(
  ctx: TRPCContext,
  args: {
    spec: RunSpec;
    experimentId: string | null;
    priority: number;
    source: "ui" | "api";
    message: string;
    /** GPUs to claim; the placement's count when absent (see claimedGpus). */
    gpus?: number;
  },
): Promise<{ runId: string }> {
  const { spec } = args;
  // Round specs and reward code too, not only the schema: a run that can only fail is not queued.
  const issues = launchIssuesOf(spec);
  if (issues.length > 0) throw badRequest(issues, "the spec cannot run");
  // What no live runner has (vLLM, DeepSpeed, GPUs, Ray, …): refused here, not after a wait in the queue.
  const gpus = claimedGpus(spec, args.gpus);
  const unrunnable = await runnerLaunchIssues(ctx.db, spec, gpus);
  if (unrunnable.length > 0) throw badRequest(unrunnable, "no live runner can run this spec");
  await assertStoredDatasetsExist(ctx.db, spec);
  await assertRunSourcesExist(ctx.db, spec);
  const queued: StatusEvent = { seq: 1, ts: Date.now(), type: "status", state: "queued", message: args.message };
  const run = await ctx.db.run.create({
    data: {
      experimentId: args.experimentId,
      name: spec.name,
      spec: spec as object,
      specVersion: spec.specVersion,
      seed: spec.seed,
      status: "queued",
      source: args.source,
      priority: args.priority,
      gpus,
      tags: spec.tags,
      lastSeq: 1,
      events: { create: [{ seq: queued.seq, type: queued.type, ts: new Date(queued.ts), payload: queued as object }] },
    },
    select: { id: true },
  });
  try {
    await appendToStream(ctx.redis, run.id, [queued]);
    const job: RunJob = QUEUES.runs.jobs.run.parse({ runId: run.id, gpus });
    await ctx.runQueue.add("run", job, runJobOptions({ id: run.id, priority: args.priority, attempt: 0 }));
  } catch (error) {
    const message = `could not enqueue the run: ${error instanceof Error ? error.message : String(error)}`;
    await transitionRun(ctx.db, run.id, { from: ["queued"], to: "failed", message, error: message }).catch(() => null);
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message, cause: error });
  }
  return { runId: run.id };
}
