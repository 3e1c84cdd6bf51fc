import { TRPCError } from "@trpc/server";
import { QUEUES, RunState, RuntimeControlCommandName, runEventStreamKey, runJobOptions, type RunJob } from "@troupe/contracts";
import { appendToStream, rewindRunAfterStep, transitionRun } from "@troupe/db";
import { z } from "zod";
import type { TRPCContext } from "../../../server/api/trpc";
import { checkpointsFromEvents } from "./checkpointList";
import { publishRunControl } from "./controlChannel";

/**
 * Pause, resume and stop-after-step of a live run, and resuming an ended one from its latest
 * checkpoint. The web never writes a live run's status itself (the runner owns its seqs): it stores
 * the command on the Run row (`controlRequest`) and publishes a control message that wakes the run's
 * runner, which takes the command from the row (once) and forwards it to the runtime; the runtime
 * acts at the next step boundary and reports `paused` / `running` / `stopped` events; the runner
 * moves the row. A runner that missed the message takes the command at its next heartbeat.
 */

/** Where each command makes sense; the reason is what the UI shows on a disabled button. */
const CONTROL_FROM: Record<RuntimeControlCommandName, { states: readonly RunState[]; why: string }> = {
  pause: { states: ["running"], why: "only a running run can be paused" },
  resume: { states: ["paused"], why: "only a paused run can be resumed (an ended run resumes from a checkpoint)" },
  stop_after_step: { states: ["running", "paused"], why: "only a running or paused run can be stopped after its step" },
};
const RESUMABLE: readonly RunState[] = ["failed", "cancelled", "stopped"];

export const RunControlInput = z.object({ runId: z.string().min(1), action: RuntimeControlCommandName });
export const RunControlOutput = z.object({
  status: RunState,
  /** The runner was asked; the run changes state at its next step boundary. */
  outcome: z.literal("requested"),
});
export type RunControlOutput = z.infer<typeof RunControlOutput>;

export const RunResumeOutput = z.object({
  status: RunState,
  outcome: z.literal("requeued"),
  /** The checkpoint step the new attempt starts after. */
  fromStep: z.number().int(),
  attempt: z.number().int(),
});
export type RunResumeOutput = z.infer<typeof RunResumeOutput>;

export const RunCheckpoint = z.object({
  step: z.number().int(),
  actor: z.string().nullable(),
  path: z.string(),
  sizeBytes: z.number().nullable(),
  ts: z.date(),
  /** The folder was deleted by `trainer.keepCheckpoints` (N = keepCheckpoints): it cannot be resumed from. */
  pruned: z.object({ keepCheckpoints: z.number().int(), ts: z.date() }).nullable(),
});
export const RunCheckpointsOutput = z.object({ checkpoints: z.array(RunCheckpoint) });

async function runStatus(ctx: TRPCContext, runId: string) {
  const run = await ctx.db.run.findUnique({ where: { id: runId }, select: { status: true, attempt: true } });
  if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${runId} not found` });
  return run;
}

export async function controlRun(ctx: TRPCContext, runId: string, action: RuntimeControlCommandName): Promise<RunControlOutput> {
  const run = await runStatus(ctx, runId);
  const rule = CONTROL_FROM[action];
  if (!rule.states.includes(run.status)) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: `run ${runId} is ${run.status}: ${rule.why}` });
  }
  // Stored first, on the condition that still allows it: the row is what the runner acts on.
  const stored = await ctx.db.run.updateMany({
    where: { id: runId, status: { in: [...rule.states] } },
    data: { controlRequest: action, controlRequestedAt: new Date() },
  });
  if (stored.count === 0) {
    const now = await runStatus(ctx, runId);
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: `run ${runId} is ${now.status}: ${rule.why}` });
  }
  try {
    await publishRunControl(ctx.redis, { runId, action });
  } catch (error) {
    // Not lost: the runner's heartbeat reads the stored command within a few seconds.
    console.warn(`run ${runId}: could not publish ${action} (${error instanceof Error ? error.message : String(error)}); the runner will read it from the database`);
  }
  return { status: run.status, outcome: "requested" };
}

/**
 * The latest checkpoint step recorded for the run whose folder still exists, or null: a checkpoint
 * with a later `checkpoint_pruned` event of its step was deleted by `trainer.keepCheckpoints`.
 * Same rule as `checkpointsFromEvents`, in SQL so a long run's events are not all read.
 */
export async function latestCheckpointStep(ctx: Pick<TRPCContext, "db">, runId: string): Promise<number | null> {
  const rows = await ctx.db.$queryRaw<{ step: number | null }[]>`
    SELECT max((c."payload"->>'step')::int) AS step FROM "RunEvent" c
    WHERE c."runId" = ${runId} AND c."type" = 'checkpoint'
      AND NOT EXISTS (
        SELECT 1 FROM "RunEvent" p
        WHERE p."runId" = c."runId" AND p."type" = 'checkpoint_pruned' AND p."seq" > c."seq"
          AND (p."payload"->>'step')::int = (c."payload"->>'step')::int)`;
  return rows[0]?.step ?? null;
}

/**
 * A failed, cancelled or stopped run with a checkpoint goes back to the queue as a new attempt
 * that continues from its latest checkpoint (the runtime's `--resume`). Metrics, memory and
 * episodes stored for later steps by the ended attempt are removed first, so no step has two values.
 */
export async function resumeFromCheckpoint(ctx: TRPCContext, runId: string): Promise<RunResumeOutput> {
  const run = await runStatus(ctx, runId);
  if (!RESUMABLE.includes(run.status)) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: `run ${runId} is ${run.status}: only a failed, cancelled or stopped run resumes from a checkpoint` });
  }
  const step = await latestCheckpointStep(ctx, runId);
  if (step === null) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: `run ${runId} has no checkpoint to resume from (set trainer.checkpointEvery, or stop it after a step)` });
  }
  const attempt = run.attempt + 1;
  const event = await transitionRun(ctx.db, runId, {
    from: [run.status],
    to: "queued",
    message: `resuming from the checkpoint of step ${step} (attempt ${attempt})`,
    error: null,
    // A command asked of the ended attempt must not act on the new one.
    extra: { resumeStep: step, cancelRequestedAt: null, controlRequest: null, finishedAt: null, pid: null },
  });
  if (!event) throw new TRPCError({ code: "CONFLICT", message: `run ${runId} changed state meanwhile; try again` });
  try {
    await rewindRunAfterStep(ctx.db, runId, step);
    // A fresh live stream: the ended one holds the rewound steps and was set to expire.
    await ctx.redis.del(runEventStreamKey(runId));
    await appendToStream(ctx.redis, runId, [event]);
    const row = await ctx.db.run.findUniqueOrThrow({ where: { id: runId }, select: { gpus: true, priority: true } });
    const job: RunJob = QUEUES.runs.jobs.run.parse({ runId, gpus: row.gpus });
    // The first attempt's job (id = run id) may still be kept by BullMQ: each attempt gets its own id.
    await ctx.runQueue.add("run", job, runJobOptions({ id: runId, priority: row.priority, attempt: run.attempt }));
  } catch (error) {
    // Queued with no job would wait forever: fail it visibly, with the reason (it stays resumable).
    const message = `could not resume from the checkpoint of step ${step}: ${error instanceof Error ? error.message : String(error)}`;
    console.error(`run ${runId}: ${message}`);
    await transitionRun(ctx.db, runId, { from: ["queued"], to: "failed", message, error: message }).catch(() => null);
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message, cause: error });
  }
  return { status: "queued", outcome: "requeued", fromStep: step, attempt };
}

export async function listCheckpoints(ctx: Pick<TRPCContext, "db">, runId: string): Promise<z.infer<typeof RunCheckpointsOutput>> {
  const rows = await ctx.db.runEvent.findMany({
    where: { runId, type: { in: ["checkpoint", "checkpoint_pruned"] } },
    orderBy: { seq: "asc" },
    take: 20_000,
  });
  return { checkpoints: checkpointsFromEvents(rows) };
}
