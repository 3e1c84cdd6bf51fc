import { TRPCError } from "@trpc/server";
import { DEMOS } from "@troupe/db";
import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { createExperiment, experimentFromRun, importSpecText, saveExperiment } from "./composer";
import {
  ExperimentCreateInput,
  ExperimentFromRunInput,
  ExperimentIdOutput,
  ExperimentSaveInput,
  ExperimentSaveOutput,
  ImportedSpec,
  ImportSpecInput,
} from "./composerSchemas";
import { launchRun } from "./launch";
import {
  ExperimentByIdInput,
  ExperimentDetail,
  ExperimentListInput,
  ExperimentListOutput,
  LaunchInput,
  LaunchOutput,
} from "./schemas";
import { summarizeSpec } from "./summary";

export const experimentRouter = createTRPCRouter({
  /** Experiments for the dashboard: the demos first (in their shipped order), then the most recently edited. */
  list: protectedProcedure
    .input(ExperimentListInput)
    .output(ExperimentListOutput)
    .query(async ({ ctx, input }) => {
      const rows = await ctx.db.experiment.findMany({
        orderBy: [{ isDemo: "desc" }, { updatedAt: "desc" }],
        take: input.limit,
        include: { _count: { select: { runs: true } } },
      });
      // Demos in their shipped order (single-actor first), whenever each was seeded; the sort is stable.
      const demoRank = (e: { id: string; isDemo: boolean }) => {
        const i = DEMOS.findIndex((d) => d.id === e.id);
        return e.isDemo ? (i === -1 ? DEMOS.length : i) : DEMOS.length + 1;
      };
      rows.sort((a, b) => demoRank(a) - demoRank(b));
      return {
        items: rows.map((e) => ({
          id: e.id,
          name: e.name,
          description: e.description,
          isDemo: e.isDemo,
          updatedAt: e.updatedAt,
          runCount: e._count.runs,
          ...summarizeSpec(e.spec),
        })),
      };
    }),

  byId: protectedProcedure
    .input(ExperimentByIdInput)
    .output(ExperimentDetail)
    .query(async ({ ctx, input }) => {
      const e = await ctx.db.experiment.findUnique({
        where: { id: input.id },
        include: { _count: { select: { runs: true } } },
      });
      if (!e) throw new TRPCError({ code: "NOT_FOUND", message: `experiment ${input.id} not found` });
      return {
        id: e.id,
        name: e.name,
        description: e.description,
        isDemo: e.isDemo,
        createdAt: e.createdAt,
        updatedAt: e.updatedAt,
        runCount: e._count.runs,
        spec: e.spec,
        ...summarizeSpec(e.spec),
      };
    }),

  /** A new experiment from a draft spec (saved as is; validated live in the composer and at launch). */
  create: protectedProcedure
    .input(ExperimentCreateInput)
    .output(ExperimentIdOutput)
    .mutation(({ ctx, input }) => createExperiment(ctx.db, input.spec)),

  /** Save the composer's draft; the experiment's name follows `spec.name`. */
  save: protectedProcedure
    .input(ExperimentSaveInput)
    .output(ExperimentSaveOutput)
    .mutation(({ ctx, input }) => saveExperiment(ctx.db, input.id, input.spec)),

  /** A new experiment holding an earlier run's frozen spec, to change one thing and launch again. */
  fromRun: protectedProcedure
    .input(ExperimentFromRunInput)
    .output(ExperimentIdOutput)
    .mutation(({ ctx, input }) => experimentFromRun(ctx.db, input.runId)),

  /** Parse a YAML or JSON spec (the REST API's parser): syntax errors and RunSpec issues with line and column. */
  importSpec: protectedProcedure
    .input(ImportSpecInput)
    .output(ImportedSpec)
    .mutation(({ input }) => importSpecText(input.text, input.format)),

  /** Validate the experiment's spec with the overrides applied, create the run and enqueue it. */
  launch: protectedProcedure
    .input(LaunchInput)
    .output(LaunchOutput)
    .mutation(({ ctx, input }) => launchRun(ctx, input)),
});
