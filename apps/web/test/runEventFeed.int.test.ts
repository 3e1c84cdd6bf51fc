import type { RunEvent } from "@troupe/contracts";
import { appendToStream, storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runEventFeed } from "../src/features/live/server/runEventFeed";
import { RunFollowers } from "../src/features/live/server/runFollowers";
import { createBareRun, metricEvents, openServices, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

/** What the runner does with a batch: Postgres first, then the stream. */
async function publish(runId: string, events: RunEvent[], streamed: RunEvent[] = events) {
  await storeEvents(services.db, runId, events);
  await appendToStream(services.redis, runId, streamed);
}

type Live = "own connection" | "shared follower";
let followers: RunFollowers;
beforeAll(() => {
  followers = new RunFollowers(() => services.connection());
});

/**
 * Consumes a feed in the background; `seqs` grows as events arrive. The live side is either a
 * blocking-read connection of the feed's own, or a watch on the run's shared follower (what the
 * SSE route uses): both must give the same events.
 */
function consume(live: Live, runId: string, after: number, options: { pageSize?: number; stopAfter?: number } = {}) {
  const abort = new AbortController();
  const redis = live === "own connection" ? services.connection() : null;
  const watch = live === "shared follower" ? followers.watch(runId, after) : null;
  const seqs: number[] = [];
  const done = (async () => {
    for await (const event of runEventFeed({ db: services.db, live: redis ? { redis } : watch!.after, runId, after, signal: abort.signal, blockMs: 200, pageSize: options.pageSize })) {
      seqs.push(event.seq);
      if (options.stopAfter !== undefined && event.seq >= options.stopAfter) break;
    }
  })();
  const stop = async () => {
    abort.abort();
    redis?.disconnect();
    watch?.release();
    await done;
  };
  return { seqs, done, stop };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000) {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe.each<Live>(["own connection", "shared follower"])("runEventFeed (SSE backfill + follow), live side: %s", (live) => {
  it("backfills from Postgres in pages, follows the stream, and ends after the terminal status", async () => {
    const runId = await createBareRun(services);
    await publish(runId, metricEvents(2, 25));

    const feed = consume(live, runId, 3, { pageSize: 7 });
    await waitFor(() => feed.seqs.length === 22, "the backfill (4..25)");
    await publish(runId, metricEvents(26, 40));
    await publish(runId, metricEvents(41, 50, "succeeded"));
    await feed.done; // ends by itself after the terminal event
    expect(feed.seqs).toEqual(range(4, 50));
  });

  it("fills a gap in the stream (trimmed, or written before it was read) from Postgres", async () => {
    const runId = await createBareRun(services);
    await publish(runId, metricEvents(2, 10));
    const feed = consume(live, runId, 0);
    await waitFor(() => feed.seqs.length === 10, "1..10");

    // 11..15 reach Postgres, but only 14 and 15 are in the stream.
    const batch = metricEvents(11, 15);
    await publish(runId, batch, batch.slice(3));
    await waitFor(() => feed.seqs.length === 15, "11..15");
    // The terminal event only in Postgres (its stream append lost): the feed still ends.
    await storeEvents(services.db, runId, metricEvents(16, 16, "failed"));
    await feed.done;
    expect(feed.seqs).toEqual(range(1, 16));
  });

  it("a client that reconnects from its last seq while events keep arriving misses and repeats nothing", async () => {
    const runId = await createBareRun(services);
    const seen: number[] = [];
    const writer = (async () => {
      for (let seq = 2; seq <= 120; seq += 4) {
        const last = Math.min(seq + 3, 120);
        await publish(runId, metricEvents(seq, last, last === 120 ? "succeeded" : undefined));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    // Connect, take a few events, drop the connection, resume from the last seq — until the run ends.
    let cursor = 0;
    for (let attempt = 0; attempt < 200 && seen.at(-1) !== 120; attempt++) {
      const feed = consume(live, runId, cursor, { stopAfter: cursor + 9, pageSize: 5 });
      await Promise.race([feed.done, new Promise((r) => setTimeout(r, 300))]);
      await feed.stop();
      seen.push(...feed.seqs);
      cursor = seen.at(-1) ?? cursor;
    }
    await writer;
    expect(seen).toEqual(range(1, 120));
  });

  it("stops a pending blocking read when the client goes away", async () => {
    const runId = await createBareRun(services);
    const feed = consume(live, runId, 1);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await feed.stop();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(feed.seqs).toEqual([]);
  });
});
