import { TRPCError } from "@trpc/server";
import { fieldIssues, QUEUES, RunSpec, type RunJob, type StatusEvent } from "@troupe/contracts";
import { appendToStream, transitionRun } from "@troupe/db";
import { badRequest, type TRPCContext } from "../../../server/api/trpc";
import type { LaunchOverrides } from "./schemas";

type LaunchArgs = { experimentId: string; overrides: LaunchOverrides; priority: number };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The experiment's spec with the launch overrides written into it (not yet validated). */
export function applyOverrides(spec: unknown, overrides: LaunchOverrides): unknown {
  if (!isObject(spec)) return spec;
  const next: Record<string, unknown> = { ...spec };
  if (overrides.seed !== undefined) next.seed = overrides.seed;
  if (overrides.steps !== undefined) {
    next.trainer = { ...(isObject(spec.trainer) ? spec.trainer : {}), steps: overrides.steps };
  }
  return next;
}

/** BullMQ runs priority 1 first; our priority is "higher is sooner", 0..100. */
export function queuePriority(priority: number): number {
  return 101 - priority;
}

/** GPUs the run asks a runner for: the distinct devices its actors are placed on (none on CPU). */
export function gpusFor(spec: RunSpec): number {
  if (spec.trainer.device === "cpu") return 0;
  return new Set(spec.actors.flatMap((a) => a.placement.gpus)).size;
}

/**
 * Launch a run of an experiment: validate the resulting RunSpec, store the Run (frozen spec) and its
 * seq-1 `queued` event in one transaction, append the event to the run's stream, enqueue the job.
 */
export async function launchRun(ctx: TRPCContext, args: LaunchArgs): Promise<{ runId: string }> {
  const experiment = await ctx.db.experiment.findUnique({ where: { id: args.experimentId } });
  if (!experiment) {
    throw new TRPCError({ code: "NOT_FOUND", message: `experiment ${args.experimentId} not found` });
  }
  const parsed = RunSpec.safeParse(applyOverrides(experiment.spec, args.overrides));
  if (!parsed.success) throw badRequest(fieldIssues(parsed.error), "invalid run spec");
  const spec = parsed.data;
  const gpus = gpusFor(spec);

  const queued: StatusEvent = { seq: 1, ts: Date.now(), type: "status", state: "queued", message: "queued from the web UI" };
  const run = await ctx.db.run.create({
    data: {
      experimentId: experiment.id,
      name: spec.name,
      spec: spec as object,
      specVersion: spec.specVersion,
      seed: spec.seed,
      status: "queued",
      source: "ui",
      priority: args.priority,
      gpus,
      tags: spec.tags,
      lastSeq: 1,
      // A nested create is one transaction: the run never exists without its first event.
      events: { create: [{ seq: queued.seq, type: queued.type, ts: new Date(queued.ts), payload: queued as object }] },
    },
    select: { id: true },
  });

  try {
    await appendToStream(ctx.redis, run.id, [queued]);
    const job: RunJob = QUEUES.runs.jobs.run.parse({ runId: run.id, gpus });
    await ctx.runQueue.add("run", job, {
      jobId: run.id,
      priority: queuePriority(args.priority),
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 1000 },
    });
  } catch (error) {
    // Without a job no runner will ever claim it: fail the run visibly instead of leaving it queued forever.
    const message = `could not enqueue the run: ${error instanceof Error ? error.message : String(error)}`;
    await transitionRun(ctx.db, run.id, { from: ["queued"], to: "failed", message, error: message }).catch(() => null);
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message, cause: error });
  }
  return { runId: run.id };
}
