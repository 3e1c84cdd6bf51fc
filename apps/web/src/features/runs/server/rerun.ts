import { TRPCError } from "@trpc/server";
import { fieldIssues, RunSpec } from "@troupe/contracts";
import { badRequest, type TRPCContext } from "../../../server/api/trpc";
import { createQueuedRun } from "./createRun";

/** Re-run: the same frozen spec (validated again, as specs are at every boundary) as a new queued run. */
export async function rerunRun(ctx: TRPCContext, runId: string): Promise<{ runId: string }> {
  const run = await ctx.db.run.findUnique({ where: { id: runId }, select: { spec: true, experimentId: true, priority: true } });
  if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${runId} not found` });
  const parsed = RunSpec.safeParse(run.spec);
  if (!parsed.success) throw badRequest(fieldIssues(parsed.error), `run ${runId} has a spec this version cannot run`);
  return createQueuedRun(ctx, {
    spec: parsed.data,
    experimentId: run.experimentId,
    priority: run.priority,
    source: "ui",
    message: `re-run of ${runId} from the web UI`,
  });
}
