import { isTerminal, type RunEvent } from "@troupe/contracts";
import { listEventsAfter, readStreamAfter } from "@troupe/db";
import type { Redis } from "ioredis";
import type { Db } from "../../../server/db";

/** Where live events come from once the backfill is done: events with seq > cursor, waiting up to waitMs. */
export type LiveSource = (cursor: number, waitMs: number, signal?: AbortSignal) => Promise<RunEvent[]>;

export interface RunEventFeedOptions {
  db: Db;
  /**
   * The live side: the run's shared follower (`RunFollowers.watch(...).after`, what the SSE route
   * uses), or a connection of the feed's own for blocking reads (the caller closes it to stop one).
   */
  live: LiveSource | { redis: Redis };
  runId: string;
  /** Last seq the client has; events with a higher seq are delivered. */
  after: number;
  signal?: AbortSignal;
  /** How long one blocking stream read waits before the feed checks on the run. */
  blockMs?: number;
  /** Backfill page size. */
  pageSize?: number;
}

const isTerminalStatus = (e: RunEvent) => e.type === "status" && isTerminal(e.state);

/**
 * Every event of a run after `after`, in seq order, each exactly once: first backfilled from
 * Postgres (in pages), then followed live on the run's Redis stream. Postgres is written before
 * the stream, so a gap in what the stream returns (a trimmed or expired stream, or an event that
 * arrived between backfill and follow) is filled from Postgres before going on. Ends after the
 * terminal status event, or when `signal` aborts.
 */
export async function* runEventFeed(options: RunEventFeedOptions): AsyncGenerator<RunEvent, void, undefined> {
  const { db, runId, signal } = options;
  const live: LiveSource =
    typeof options.live === "function" ? options.live : ((redis) => (cursor: number, waitMs: number) => readStreamAfter(redis, runId, cursor, waitMs))(options.live.redis);
  const blockMs = options.blockMs ?? 5000;
  const pageSize = options.pageSize ?? 500;
  let cursor = options.after;
  let finished = false;

  /** Events from Postgres after the cursor, up to (not including) `before` when given. */
  async function* backfill(before?: number): AsyncGenerator<RunEvent, void, undefined> {
    while (!signal?.aborted) {
      const page = await listEventsAfter(db, runId, cursor, pageSize);
      for (const event of page) {
        if (before !== undefined && event.seq >= before) return;
        cursor = event.seq;
        yield event;
        if (isTerminalStatus(event)) {
          finished = true;
          return;
        }
      }
      if (page.length < pageSize) return;
    }
  }

  yield* backfill();

  while (!finished && !signal?.aborted) {
    let events: RunEvent[];
    try {
      events = await live(cursor, blockMs, signal);
    } catch (error) {
      if (signal?.aborted) return; // the connection was closed under a pending read
      throw error;
    }
    if (events.length === 0) {
      // Quiet stream. If the run ended and its stream expired or was never written, Postgres has the end.
      yield* backfill();
      continue;
    }
    for (const event of events) {
      if (event.seq <= cursor) continue;
      if (event.seq > cursor + 1) {
        yield* backfill(event.seq);
        if (finished) return;
        if (event.seq <= cursor) continue;
      }
      cursor = event.seq;
      yield event;
      if (isTerminalStatus(event)) return;
    }
  }
}
