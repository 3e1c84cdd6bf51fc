import { RunEvent, isTerminal, type StatusEvent } from "@troupe/contracts";
import { appendToStream, storeEvents, transitionRun, type EventStoreDb } from "@troupe/db";
import type { Redis } from "ioredis";
import { Batcher } from "../io/batcher";
import type { LogSink } from "./logSink";

type ErrorEvent = Extract<RunEvent, { type: "error" }>;

export interface IngestOptions {
  /** How long the final drain retries while Postgres is away (TROUPE_DB_RETRY_MS). */
  giveUpAfterMs?: number;
  /** True while the runner hands the run over (shutdown): a `stopped` status is then not an end. */
  handingOver?: () => boolean;
}

/** Longest event line accepted (an episode with long conversations is big, but not this big). */
export const MAX_EVENT_LINE_CHARS = 8 << 20;

/**
 * Turns the runtime's events pipe into stored events: each line is parsed with the contracts'
 * `RunEvent` schema; a line that is not a valid event becomes a warning in the run's log (the
 * run goes on). Valid events are batched (every 200 ms or 500 events), stored in Postgres
 * (idempotent) and then appended to the run's Redis stream.
 */
export class EventIngest {
  /** The runtime's own final status event, if it sent one. */
  terminalStatus: StatusEvent | null = null;
  /** The last `error` event, for the failure message. */
  lastError: ErrorEvent | null = null;
  /** The runtime stopped after its step for a hand-over (see `handingOver`). */
  handedOver = false;
  received = 0;
  private readonly batcher: Batcher<RunEvent>;

  constructor(
    db: EventStoreDb,
    redis: Redis,
    private readonly runId: string,
    private readonly seqStart: number,
    private readonly log: LogSink,
    onError: (error: unknown) => void,
    private readonly options: IngestOptions = {},
  ) {
    this.batcher = new Batcher({
      maxItems: 500,
      maxDelayMs: 200,
      ...(options.giveUpAfterMs !== undefined ? { giveUpAfterMs: options.giveUpAfterMs } : {}),
      flush: async (events) => {
        await storeEvents(db, runId, events);
        await followPauses(db, runId, events);
        // Postgres has them now: a Redis outage costs live viewers a reload (backfill), never the run.
        await appendToStream(redis, runId, events).catch((error: unknown) => onError(new Error(`live stream append failed (the events are stored in Postgres; not retried): ${(error as Error).message}`)));
      },
      onError,
    });
  }

  handleLine(line: string, truncated: boolean): void {
    if (line.trim() === "") return;
    const event = parseEventLine(truncated ? null : line);
    if (!event.ok) {
      this.log.write("runner", `warning: ignored a malformed event line (${event.reason}): ${preview(line)}`);
      return;
    }
    let e = event.value;
    if (e.seq < this.seqStart) {
      this.log.write("runner", `warning: ignored event seq ${e.seq}, below --seq-start ${this.seqStart}: ${preview(line)}`);
      return;
    }
    this.received += 1;
    if (e.type === "status" && e.state === "stopped" && this.options.handingOver?.()) {
      // Not the run's end: it resumes on the next runner. A terminal status in the stream would make
      // every open run page stop following it; the same seq as a log line keeps the history.
      this.handedOver = true;
      e = { seq: e.seq, ts: e.ts, type: "log", level: "info", message: `${e.message ?? "stopped after the step"} (runner shutting down: the run will resume from this checkpoint on the next runner)` };
    }
    if (e.type === "status" && isTerminal(e.state)) this.terminalStatus = e;
    if (e.type === "error") this.lastError = e;
    this.batcher.push(e);
  }

  drain(): Promise<void> {
    return this.batcher.drain();
  }
}

/**
 * The runtime's `paused` / `running` status events (pause and resume at a step boundary) move
 * the Run row too, adopting the stored event (no second event). Conditional: a run that already
 * ended, or was never paused, is left as it is.
 */
async function followPauses(db: EventStoreDb, runId: string, events: readonly RunEvent[]): Promise<void> {
  for (const e of events) {
    if (e.type !== "status") continue;
    if (e.state === "paused") await transitionRun(db, runId, { from: ["running"], to: "paused", recordedEvent: e });
    if (e.state === "running") await transitionRun(db, runId, { from: ["paused"], to: "running", recordedEvent: e });
  }
}

type Parsed = { ok: true; value: RunEvent } | { ok: false; reason: string };

/** Parses one events line; never throws. NUL characters (which jsonb refuses) become U+FFFD. */
export function parseEventLine(line: string | null): Parsed {
  if (line === null) return { ok: false, reason: "line too long" };
  let json: unknown;
  try {
    json = JSON.parse(line, (_key, value: unknown) =>
      typeof value === "string" && value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value,
    );
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  const result = RunEvent.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  return { ok: false, reason: `${issue.path.join(".") || "event"}: ${issue.message}` };
}

const preview = (line: string) => (line.length > 300 ? `${line.slice(0, 300)}…` : line);
