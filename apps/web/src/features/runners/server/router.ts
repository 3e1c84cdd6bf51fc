import { z } from "zod";
import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { loadRunnerSupport, loadRunnersPage, loadWhyWaiting, RunnersPageOutput, RunnerSupportOutput, WhyWaitingOutput } from "./runnersView";

export const runnerRouter = createTRPCRouter({
  /** The /runners page: every runner, its GPUs, engines and runs; queued runs with why they wait. */
  list: protectedProcedure.output(RunnersPageOutput).query(({ ctx }) => loadRunnersPage(ctx.db)),
  /** What the designer disables: each requirement no live runner can honour, with the reason. */
  support: protectedProcedure.output(RunnerSupportOutput).query(({ ctx }) => loadRunnerSupport(ctx.db)),
  /** A queued run's page: why it still waits (null once it is not queued). */
  whyWaiting: protectedProcedure
    .input(z.object({ runId: z.string().min(1).max(100) }))
    .output(WhyWaitingOutput)
    .query(({ ctx, input }) => loadWhyWaiting(ctx.db, input.runId)),
});
