import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { GpuTimeline } from "../lib/residencyTimeline";
import { loadGpuTimeline } from "./timeline";

/** The run page's GPU timeline: residency per device and phase, and the moves between them. */
export const timelineRouter = createTRPCRouter({
  ofRun: protectedProcedure
    .input(
      z
        .object({ runId: z.string().min(1), fromStep: z.number().int().min(0).optional(), toStep: z.number().int().min(0).optional() })
        .strict()
        .refine((w) => w.fromStep === undefined || w.toStep === undefined || w.fromStep <= w.toStep, { message: "fromStep must not be after toStep", path: ["fromStep"] }),
    )
    .output(GpuTimeline)
    .query(async ({ ctx, input }) => {
      const run = await ctx.db.run.findUnique({ where: { id: input.runId }, select: { id: true } });
      if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${input.runId} not found` });
      return loadGpuTimeline(ctx.db, input.runId, input);
    }),
});
