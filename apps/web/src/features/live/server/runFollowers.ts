import { isTerminal, type RunEvent } from "@troupe/contracts";
import { readStreamAfter } from "@troupe/db";
import type { Redis } from "ioredis";

/**
 * One reader of a run's Redis stream per web process, however many live streams watch the run.
 * Each used to hold its own connection in a blocking XREAD: one viewer's 200 streams took Redis
 * from 10 to 192 connections and the API from 19 ms to 8.3 s. A follower reads the stream once,
 * keeps the recent events, and hands each watcher the ones after its cursor; the watcher's feed
 * (runEventFeed) still backfills from Postgres whatever the follower does not hold.
 *
 * The follower stops reading after the run's terminal status, and closes its connection when the
 * last watcher leaves. A Redis error ends the follower: its watchers' feeds throw (their streams
 * close and browsers reconnect), and the next watcher starts a fresh one.
 */

/**
 * Recent events a follower keeps for watchers that join late or fall behind (older ones come from
 * Postgres). Episode events carry transcripts, so this stays small.
 */
const KEEP_EVENTS = 500;
/** How long one blocking read waits before the follower checks whether anyone still watches. */
const READ_BLOCK_MS = 5000;

export type ConnectionFactory = (runId: string) => Redis;

const isTerminalStatus = (e: RunEvent) => e.type === "status" && isTerminal(e.state);

class RunFollower {
  private readonly events: RunEvent[] = [];
  private waiters = new Set<() => void>();
  private failure: unknown = null;
  private lastSeq: number;
  private finished = false;
  watchers = 0;
  stopped = false;

  constructor(
    readonly runId: string,
    private readonly redis: Redis,
    fromSeq: number,
    private readonly onStop: (follower: RunFollower) => void,
  ) {
    this.lastSeq = fromSeq;
    void this.loop();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  private async loop(): Promise<void> {
    while (!this.stopped && !this.finished) {
      let batch: RunEvent[];
      try {
        batch = await readStreamAfter(this.redis, this.runId, this.lastSeq, READ_BLOCK_MS);
      } catch (error) {
        if (!this.stopped) {
          this.failure = error;
          this.stop();
        }
        return;
      }
      if (batch.length === 0) continue;
      for (const event of batch) {
        if (event.seq <= this.lastSeq) continue;
        this.lastSeq = event.seq;
        this.events.push(event);
        if (isTerminalStatus(event)) this.finished = true;
      }
      if (this.events.length > KEEP_EVENTS) this.events.splice(0, this.events.length - KEEP_EVENTS);
      this.wake();
    }
    // Nothing more will come after the terminal status: the connection is not needed any more.
    if (this.finished) this.redis.disconnect();
  }

  /** Held events with seq > cursor, waiting up to `waitMs` for some when there are none. */
  async after(cursor: number, waitMs: number, signal?: AbortSignal): Promise<RunEvent[]> {
    const ready = () => {
      if (this.failure) throw this.failure;
      const from = this.events.findIndex((e) => e.seq > cursor);
      return from === -1 ? [] : this.events.slice(from);
    };
    const now = ready();
    // After the terminal status nothing wakes a waiter: it waits out `waitMs` (no busy loop).
    if (now.length > 0 || waitMs <= 0 || signal?.aborted) return now;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      signal?.addEventListener("abort", done, { once: true });
      this.waiters.add(done);
    });
    return ready();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.redis.disconnect(); // also ends a pending blocking read
    this.onStop(this);
    this.wake();
  }
}

export interface RunWatch {
  /** Events with seq > cursor that the run's follower holds, waiting up to `waitMs` when none. */
  after(cursor: number, waitMs: number, signal?: AbortSignal): Promise<RunEvent[]>;
  /** This watcher is done; the last one out stops the follower. */
  release(): void;
}

/** The followers of one web process, by run id. */
export class RunFollowers {
  private readonly byRun = new Map<string, RunFollower>();

  constructor(private readonly connect: ConnectionFactory) {}

  /** Watch a run from `cursor`: joins its follower, or starts one reading after `cursor`. */
  watch(runId: string, cursor: number): RunWatch {
    let follower = this.byRun.get(runId);
    if (!follower || follower.stopped) {
      follower = new RunFollower(runId, this.connect(runId), cursor, (f) => {
        if (this.byRun.get(f.runId) === f) this.byRun.delete(f.runId);
      });
      this.byRun.set(runId, follower);
    }
    const joined = follower;
    joined.watchers++;
    let released = false;
    return {
      after: (c, waitMs, signal) => joined.after(c, waitMs, signal),
      release: () => {
        if (released) return;
        released = true;
        joined.watchers--;
        if (joined.watchers === 0) joined.stop();
      },
    };
  }

  /** Runs being followed now (one Redis connection each, at most). */
  get size(): number {
    return this.byRun.size;
  }
}
