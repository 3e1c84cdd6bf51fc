import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { loadRunnerSupport, loadRunnersPage, RunnersPageOutput, RunnerSupportOutput } from "./runnersView";

export const runnerRouter = createTRPCRouter({
  /** The /runners page: every runner, its GPUs, engines and runs; queued runs with why they wait. */
  list: protectedProcedure.output(RunnersPageOutput).query(({ ctx }) => loadRunnersPage(ctx.db)),
  /** What the designer disables: each requirement no live runner can honour, with the reason. */
  support: protectedProcedure.output(RunnerSupportOutput).query(({ ctx }) => loadRunnerSupport(ctx.db)),
});
