import { runEventStreamKey, type RunEvent } from "@troupe/contracts";
import type { Redis } from "ioredis";
import { parseEvents } from "./parse";

/**
 * The live side of a run's events: one Redis stream per run (`runEventStreamKey`), entry id
 * `<seq>-0`, one field `event` with the JSON event. Postgres is written first, so everything
 * in a stream is also in Postgres; the stream is only a fast way to follow a run.
 */

/** Approximate cap on a stream's length; older entries stay readable from Postgres. */
export const STREAM_MAX_LEN = 10_000;

/** How long a finished run's stream stays in Redis (the web falls back to Postgres after). */
export const FINISHED_STREAM_TTL_S = 3600;

const ALREADY_APPENDED = /equal or smaller than the target stream top item/i;

/**
 * Appends events in seq order with explicit ids. An id that is not above the stream's last
 * one means the event was appended before (a retried batch), so that error is ignored; any
 * other error is thrown.
 */
export async function appendToStream(redis: Redis, runId: string, events: readonly RunEvent[]): Promise<void> {
  if (events.length === 0) return;
  const key = runEventStreamKey(runId);
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  const pipeline = redis.pipeline();
  for (const e of sorted) {
    pipeline.xadd(key, "MAXLEN", "~", STREAM_MAX_LEN, `${e.seq}-0`, "event", JSON.stringify(e));
  }
  const results = (await pipeline.exec()) ?? [];
  for (const [error] of results) {
    if (error && !ALREADY_APPENDED.test(error.message)) {
      throw new Error(`appendToStream(run ${runId}): ${error.message}`);
    }
  }
}

/**
 * Events with seq > afterSeq from the run's stream, waiting up to `blockMs` for the first one
 * (XREAD BLOCK). `blockMs <= 0` does not wait at all (Redis would read BLOCK 0 as "forever").
 * A blocking read holds its connection: give it a connection of its own.
 */
export async function readStreamAfter(
  redis: Redis,
  runId: string,
  afterSeq: number,
  blockMs: number,
  count = 1000,
): Promise<RunEvent[]> {
  const key = runEventStreamKey(runId);
  const from = `${afterSeq}-0`;
  const reply =
    blockMs > 0
      ? await redis.xread("COUNT", count, "BLOCK", blockMs, "STREAMS", key, from)
      : await redis.xread("COUNT", count, "STREAMS", key, from);
  if (!reply) return [];
  const raw: unknown[] = [];
  for (const [, entries] of reply) {
    for (const [, fields] of entries) {
      const json = fieldValue(fields, "event");
      if (json !== undefined) raw.push(JSON.parse(json));
    }
  }
  return parseEvents(raw, `readStreamAfter(run ${runId})`);
}

/** Lets a finished run's stream expire; readers then backfill from Postgres. */
export async function expireStream(redis: Redis, runId: string, ttlSeconds = FINISHED_STREAM_TTL_S): Promise<void> {
  await redis.expire(runEventStreamKey(runId), ttlSeconds);
}

function fieldValue(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}
