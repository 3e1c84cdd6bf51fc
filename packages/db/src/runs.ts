import { isTerminal, type RunState, type StatusEvent } from "@troupe/contracts";
import type { Prisma } from "./generated/prisma/client";
import type { EventStoreDb } from "./events/dbClient";

/**
 * Every status change a run may make. `paused` is a running run waiting at a step boundary (the
 * process is alive), so it ends the same ways a running run does; `failed`, `cancelled` and
 * `stopped` go back to `queued` only to resume from a checkpoint (a new attempt). `succeeded` is final.
 * `running`/`paused` → `queued` is a hand-back: a runner shutting down stopped the run after its step
 * with a checkpoint, and the next runner resumes it (the run never ends on the way).
 */
export const ALLOWED_TRANSITIONS: Readonly<Record<RunState, readonly RunState[]>> = {
  queued: ["running", "failed", "cancelled"],
  running: ["paused", "succeeded", "failed", "cancelled", "stopped", "queued"],
  paused: ["running", "succeeded", "failed", "cancelled", "stopped", "queued"],
  succeeded: [],
  failed: ["queued"],
  cancelled: ["queued"],
  stopped: ["queued"],
};

export const canTransition = (from: RunState, to: RunState) => ALLOWED_TRANSITIONS[from].includes(to);

export interface TransitionOptions {
  /** The run moves only if its status is one of these (the optimistic "compare" of compare-and-set). */
  from: readonly RunState[];
  to: RunState;
  /** Text of the status event. */
  message?: string;
  /** Why the run failed or was cancelled (Run.error); `null` clears it, leaving it out keeps it. */
  error?: string | null;
  /** Last log lines (Run.logTail); `null` clears, absent keeps. */
  logTail?: string | null;
  /** Other Run columns set in the same UPDATE (runnerId, startedAt, attempt, heartbeatAt…). */
  extra?: Omit<Prisma.RunUpdateManyMutationInput, "status" | "lastSeq" | "error" | "logTail">;
  /** Further conditions on the row, e.g. "its heartbeat is older than X" for the stall sweeper. */
  where?: Prisma.RunWhereInput;
  /**
   * The status event was already stored by `storeEvents` (the runtime reported its own final
   * status): update the row only, allocate no seq, and return this event.
   */
  recordedEvent?: StatusEvent;
  now?: Date;
}

/**
 * Moves a run from one of `from` to `to` and records the change as a `status` event, all in
 * one transaction:
 *   UPDATE "Run" SET status = to, "lastSeq" = "lastSeq" + 1, … WHERE id = ? AND status IN (from) RETURNING "lastSeq"
 *   INSERT the status event with that seq.
 * Returns the event, or null when the run was not in `from` (someone else moved it first), so
 * callers race safely: exactly one of two concurrent transitions from the same state wins.
 * Entering a terminal state sets finishedAt.
 */
export async function transitionRun(
  db: EventStoreDb,
  runId: string,
  options: TransitionOptions,
): Promise<StatusEvent | null> {
  const { from, to, message, error, logTail, extra, where, recordedEvent } = options;
  const illegal = from.filter((state) => !canTransition(state, to));
  // A caller bug, not a race: fail loudly instead of writing a history no run can have.
  if (illegal.length > 0) throw new Error(`transitionRun(${runId}): ${illegal.join(", ")} → ${to} is not an allowed transition`);
  const now = options.now ?? new Date();
  const data: Prisma.RunUpdateManyMutationInput = {
    ...extra,
    status: to,
    ...(isTerminal(to) ? { finishedAt: now } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(logTail !== undefined ? { logTail } : {}),
    ...(recordedEvent ? {} : { lastSeq: { increment: 1 } }),
  };

  return db.$transaction(async (tx) => {
    const updated = await tx.run.updateManyAndReturn({
      where: { AND: [{ id: runId, status: { in: [...from] } }, where ?? {}] },
      data,
      select: { lastSeq: true },
    });
    const row = updated[0];
    if (!row) return null;
    if (recordedEvent) return recordedEvent;

    const event: StatusEvent = {
      seq: row.lastSeq,
      ts: now.getTime(),
      type: "status",
      state: to,
      // The contracts cap a status message at 10,000 characters; keep the event valid.
      ...(message !== undefined ? { message: message.slice(0, 10_000) } : {}),
    };
    await tx.runEvent.create({
      data: { runId, seq: event.seq, type: event.type, ts: now, payload: event },
    });
    return event;
  });
}
