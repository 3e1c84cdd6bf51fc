import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { RunEloOutput } from "../lib/eloRatings";
import { loadEloRatings } from "./elo";

/** The run page's Elo per checkpoint (game environments with `trainer.ratings`). */
export const ratingsRouter = createTRPCRouter({
  ofRun: protectedProcedure
    .input(z.object({ runId: z.string().min(1) }).strict())
    .output(RunEloOutput)
    .query(async ({ ctx, input }) => {
      const run = await ctx.db.run.findUnique({ where: { id: input.runId }, select: { id: true } });
      if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${input.runId} not found` });
      return loadEloRatings(ctx.db, input.runId);
    }),
});
