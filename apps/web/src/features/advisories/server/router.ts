import { RunAdvisory, RunAdvisorySummary } from "@troupe/contracts";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { advisorySummaries, listAdvisories } from "./advisories";

/** Health advisories of runs: the run page's panel and the runs tables' badges. */
export const advisoryRouter = createTRPCRouter({
  ofRun: protectedProcedure
    .input(z.object({ runId: z.string().min(1) }).strict())
    .output(z.array(RunAdvisory))
    .query(async ({ ctx, input }) => {
      const run = await ctx.db.run.findUnique({ where: { id: input.runId }, select: { id: true } });
      if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${input.runId} not found` });
      return listAdvisories(ctx.db, input.runId);
    }),

  summaries: protectedProcedure
    .input(z.object({ runIds: z.array(z.string().min(1)).max(200) }).strict())
    .output(z.array(RunAdvisorySummary))
    .query(({ ctx, input }) => advisorySummaries(ctx.db, input.runIds)),
});
