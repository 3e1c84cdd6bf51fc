import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import type { Db } from "../../../server/db";
import { toColumns } from "../lib/seriesColumns";
import { cancelRun } from "./cancel";
import { deleteRun } from "./deleteRun";
import {
  controlRun,
  listCheckpoints,
  resumeFromCheckpoint,
  RunCheckpointsOutput,
  RunControlInput,
  RunControlOutput,
  RunResumeOutput,
} from "./control";
import {
  RunCancelOutput,
  RunDetail,
  RunEpisodesInput,
  RunEpisodesOutput,
  RunIdInput,
  RunListInput,
  RunListOutput,
  RunLogsInput,
  RunLogsOutput,
  RunMemoryInput,
  RunMemoryOutput,
  RunMetricsInput,
  RunMetricsOutput,
  RunMetricNamesOutput,
} from "./schemas";
import { pageEpisodes } from "./episodes";
import { RunEvalResultsOutput } from "../lib/evalResults";
import { loadEvalResults } from "./evalResults";
import { listMetricSeriesKeys, loadMemorySeries, loadMetricSeries } from "./series";
import { loadMemoryPeaks, RunMemoryPeaksOutput } from "./memoryPeaks";
import { loadOffloads, RunOffloadsInput, RunOffloadsOutput } from "./offloads";
import { rerunRun } from "./rerun";
import { collectFromRun } from "./collect";
import { CollectInput, CollectResult, RunDeleted } from "@troupe/contracts";
import { listRunTable, RunTableInput, RunTableOutput } from "./table";
import { episodeActors, episodeSteps, listTranscripts, TranscriptsInput, TranscriptsOutput } from "./transcripts";
import { lastRewards, listRunSummaries, runSummarySelect, toRunSummary } from "./summaries";

async function requireRun(ctx: { db: Db }, runId: string) {
  const run = await ctx.db.run.findUnique({ where: { id: runId }, select: { id: true } });
  if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${runId} not found` });
}

export const runRouter = createTRPCRouter({
  list: protectedProcedure
    .input(RunListInput)
    .output(RunListOutput)
    .query(({ ctx, input }) =>
      listRunSummaries(ctx.db, {
        where: {
          ...(input.status ? { status: input.status } : {}),
          ...(input.experimentId ? { experimentId: input.experimentId } : {}),
        },
        limit: input.limit,
        cursor: input.cursor,
      }),
    ),

  byId: protectedProcedure
    .input(RunIdInput)
    .output(RunDetail)
    .query(async ({ ctx, input }) => {
      const run = await ctx.db.run.findUnique({
        where: { id: input.runId },
        select: {
          ...runSummarySelect,
          specVersion: true,
          seed: true,
          priority: true,
          gpus: true,
          gpuIds: true,
          tags: true,
          source: true,
          error: true,
          logTail: true,
          attempt: true,
          lastSeq: true,
          runnerId: true,
          workDir: true,
          cancelRequestedAt: true,
          heartbeatAt: true,
        },
      });
      if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${input.runId} not found` });
      const rewards = await lastRewards(ctx.db, [run.id]);
      return {
        ...toRunSummary(run, rewards.get(run.id) ?? null),
        specVersion: run.specVersion,
        spec: run.spec,
        seed: run.seed,
        priority: run.priority,
        gpus: run.gpus,
        gpuIds: run.gpuIds,
        tags: run.tags,
        source: run.source,
        error: run.error,
        logTail: run.logTail,
        attempt: run.attempt,
        lastSeq: run.lastSeq,
        runnerId: run.runnerId,
        workDir: run.workDir,
        cancelRequestedAt: run.cancelRequestedAt,
        heartbeatAt: run.heartbeatAt,
      };
    }),

  cancel: protectedProcedure
    .input(RunIdInput)
    .output(RunCancelOutput)
    .mutation(({ ctx, input }) => cancelRun(ctx, input.runId)),

  /** An ended run and everything stored for it (not its files on the runner host); a live one is refused. */
  delete: protectedProcedure
    .input(RunIdInput)
    .output(RunDeleted)
    .mutation(({ ctx, input }) => deleteRun(ctx, input.runId)),

  /** Pause, resume or stop-after-step a live run (acts at its next step boundary). */
  control: protectedProcedure
    .input(RunControlInput)
    .output(RunControlOutput)
    .mutation(({ ctx, input }) => controlRun(ctx, input.runId, input.action)),

  /** A failed, cancelled or stopped run continues from its latest checkpoint as a new attempt. */
  resumeFromCheckpoint: protectedProcedure
    .input(RunIdInput)
    .output(RunResumeOutput)
    .mutation(({ ctx, input }) => resumeFromCheckpoint(ctx, input.runId)),

  checkpoints: protectedProcedure
    .input(RunIdInput)
    .output(RunCheckpointsOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      return listCheckpoints(ctx, input.runId);
    }),

  metrics: protectedProcedure
    .input(RunMetricsInput)
    .output(RunMetricsOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      const { fromStep, toStep, actors, withTime } = input;
      const series = await loadMetricSeries(ctx.db, input.runId, input.names, input.maxPoints, { fromStep, toStep, actors, withTime });
      return { series: series.map(toColumns) };
    }),

  /** The latest eval values per environment and actor (`eval/<environment>/…` metrics), for the run page's table. */
  evalResults: protectedProcedure
    .input(RunIdInput)
    .output(RunEvalResultsOutput)
    .query(async ({ ctx, input }) => {
      const run = await ctx.db.run.findUnique({ where: { id: input.runId }, select: { spec: true } });
      if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${input.runId} not found` });
      return loadEvalResults(ctx.db, input.runId, run.spec);
    }),

  /** The (metric, actor) series a run has reported, so pages chart what exists instead of a fixed list. */
  metricNames: protectedProcedure
    .input(RunIdInput)
    .output(RunMetricNamesOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      return { series: await listMetricSeriesKeys(ctx.db, input.runId) };
    }),

  memory: protectedProcedure
    .input(RunMemoryInput)
    .output(RunMemoryOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      return { series: await loadMemorySeries(ctx.db, input.runId, input.device, input.maxPoints) };
    }),

  logs: protectedProcedure
    .input(RunLogsInput)
    .output(RunLogsOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      const select = { lineNo: true, stream: true, text: true, ts: true } as const;
      const textFilter = input.q ? { text: { contains: input.q, mode: "insensitive" as const } } : {};
      const lines =
        input.afterLineNo === undefined
          ? (
              await ctx.db.logLine.findMany({
                where: { runId: input.runId, ...textFilter },
                orderBy: { lineNo: "desc" },
                take: input.limit,
                select,
              })
            ).reverse()
          : await ctx.db.logLine.findMany({
              where: { runId: input.runId, lineNo: { gt: input.afterLineNo }, ...textFilter },
              orderBy: { lineNo: "asc" },
              take: input.limit,
              select,
            });
      return { lines, lastLineNo: lines.at(-1)?.lineNo ?? null };
    }),

  /** The runs table: filter, sort, search, offset pages with a total. */
  table: protectedProcedure
    .input(RunTableInput)
    .output(RunTableOutput)
    .query(({ ctx, input }) => listRunTable(ctx.db, input)),

  /** A new queued run with the same frozen spec. */
  rerun: protectedProcedure
    .input(RunIdInput)
    .output(z.object({ runId: z.string() }))
    .mutation(({ ctx, input }) => rerunRun(ctx, input.runId)),

  /** A finished run's good episodes as a dataset in the library (collect.ts); REST and `troupe collect` too. */
  collect: protectedProcedure
    .input(CollectInput.extend({ runId: z.string().min(1) }))
    .output(CollectResult)
    .mutation(({ ctx, input: { runId, ...input } }) => collectFromRun(ctx.db, runId, input)),

  memoryPeaks: protectedProcedure
    .input(RunIdInput)
    .output(RunMemoryPeaksOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      return { peaks: await loadMemoryPeaks(ctx.db, input.runId) };
    }),

  /** The run's offload / reload moves (markers on the memory timeline) and their totals per actor. */
  offloads: protectedProcedure
    .input(RunOffloadsInput)
    .output(RunOffloadsOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      return loadOffloads(ctx.db, input.runId, input.maxMarkers);
    }),

  /** Transcripts for the browser: filters and keyset pages. */
  transcripts: protectedProcedure
    .input(TranscriptsInput)
    .output(TranscriptsOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      return listTranscripts(ctx.db, input);
    }),

  episodeSteps: protectedProcedure
    .input(RunIdInput)
    .output(z.object({ steps: z.array(z.number().int()), actors: z.array(z.string()) }))
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      const [steps, actors] = await Promise.all([episodeSteps(ctx.db, input.runId, 1000), episodeActors(ctx.db, input.runId)]);
      return { steps, actors };
    }),

  episodes: protectedProcedure
    .input(RunEpisodesInput)
    .output(RunEpisodesOutput)
    .query(async ({ ctx, input }) => {
      await requireRun(ctx, input.runId);
      const recentSteps = await episodeSteps(ctx.db, input.runId, 50);
      const step = input.step ?? recentSteps[0] ?? null;
      if (step === null) return { step: null, recentSteps, episodes: [] };
      const { items } = await pageEpisodes(ctx.db, input.runId, { step, limit: input.limit, order: "grouped" });
      return { step, recentSteps, episodes: items };
    }),
});
