import { TRPCError } from "@trpc/server";
import { fieldIssues, RunSpec } from "@troupe/contracts";
import { badRequest, type TRPCContext } from "../../../server/api/trpc";
import { createQueuedRun } from "../../runs/server/createRun";
import type { LaunchOverrides } from "./schemas";

type LaunchArgs = { experimentId: string; overrides: LaunchOverrides; priority: number; gpus?: number };

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

// Queue priority and GPU count live with the one place that stores and enqueues a run.
export { gpusFor } from "../../runs/server/createRun";

/**
 * Launch a run of an experiment: validate the resulting RunSpec (errors name the field), then store
 * and enqueue it through the same path as a re-run or a REST launch.
 */
export async function launchRun(ctx: TRPCContext, args: LaunchArgs): Promise<{ runId: string }> {
  const experiment = await ctx.db.experiment.findUnique({ where: { id: args.experimentId } });
  if (!experiment) {
    throw new TRPCError({ code: "NOT_FOUND", message: `experiment ${args.experimentId} not found` });
  }
  const parsed = RunSpec.safeParse(applyOverrides(experiment.spec, args.overrides));
  if (!parsed.success) throw badRequest(fieldIssues(parsed.error), "invalid run spec");
  return createQueuedRun(ctx, {
    spec: parsed.data,
    experimentId: experiment.id,
    priority: args.priority,
    ...(args.gpus !== undefined ? { gpus: args.gpus } : {}),
    source: "ui",
    message: "queued from the web UI",
  });
}
