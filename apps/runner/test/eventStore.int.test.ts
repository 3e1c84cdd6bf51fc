import { runEventStreamKey, type RunEvent } from "@troupe/contracts";
import { appendToStream, listEventsAfter, readStreamAfter, storeEvents } from "@troupe/db";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueuedRun, openServices, serviceUrls, streamIds, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

/** Seqs 2.. of a small run: per step a metric (two values), memory and episode; then a log and a checkpoint. */
function sampleEvents(steps: number): RunEvent[] {
  const events: RunEvent[] = [];
  let seq = 2;
  for (let step = 1; step <= steps; step++) {
    events.push({ seq: seq++, ts: 1_700_000_000_000 + step, type: "metric", step, actor: "student", values: { "reward/mean": step / 10, loss: 1 / step } });
    events.push({ seq: seq++, ts: 1_700_000_000_000 + step, type: "memory", step, phase: "update", device: "cpu", rssBytes: 123_456_789 * step });
    events.push({
      seq: seq++,
      ts: 1_700_000_000_000 + step,
      type: "episode",
      step,
      environment: "echo",
      group: 0,
      sample: step,
      datasetRow: 7,
      messages: [{ actor: "student", role: "assistant", content: `answer ${step}`, trained: true }],
      reward: step,
      rewardComponents: { letter_match: step },
    });
  }
  events.push({ seq: seq++, ts: 1_700_000_001_000, type: "log", level: "info", message: "hello" });
  events.push({ seq: seq++, ts: 1_700_000_001_000, type: "checkpoint", step: steps, path: "ckpt/step-3" });
  return events;
}

async function counts(runId: string) {
  const [events, metrics, memory, episodes] = await Promise.all([
    services.db.runEvent.count({ where: { runId } }),
    services.db.metricPoint.count({ where: { runId } }),
    services.db.memorySample.count({ where: { runId } }),
    services.db.episode.count({ where: { runId } }),
  ]);
  return { events, metrics, memory, episodes };
}

describe("storeEvents", () => {
  it("stores a batch with its derived rows, and a replay stores nothing twice", async () => {
    const runId = await createQueuedRun(services, { fixture: {} });
    const events = sampleEvents(3);

    expect(await storeEvents(services.db, runId, events)).toEqual({ inserted: 11 });
    const first = await counts(runId);
    expect(first).toEqual({ events: 12, metrics: 6, memory: 3, episodes: 3 });
    expect(await services.db.run.findUniqueOrThrow({ where: { id: runId }, select: { lastSeq: true, lastStep: true } })).toEqual({ lastSeq: 12, lastStep: 3 });

    expect(await storeEvents(services.db, runId, events)).toEqual({ inserted: 0 });
    expect(await storeEvents(services.db, runId, [...events].reverse())).toEqual({ inserted: 0 });
    expect(await counts(runId)).toEqual(first);

    const point = await services.db.metricPoint.findUniqueOrThrow({ where: { runId_name_actor_step: { runId, name: "loss", actor: "student", step: 2 } } });
    expect(point.value).toBe(0.5);
    const memory = await services.db.memorySample.findFirstOrThrow({ where: { runId, step: 3 } });
    expect(memory.rssBytes).toBe(370_370_367n);
    const episode = await services.db.episode.findFirstOrThrow({ where: { runId, step: 2 } });
    expect(episode).toMatchObject({ groupIndex: 0, sampleIndex: 2, datasetRow: 7, reward: 2, advantage: null, rewardComponents: { letter_match: 2 } });
  });

  it("never lowers lastSeq or lastStep, and stores only the new part of an overlapping batch", async () => {
    const runId = await createQueuedRun(services, {});
    const events = sampleEvents(3);
    await storeEvents(services.db, runId, events.slice(3, 9)); // steps 2 and 3
    expect(await storeEvents(services.db, runId, events.slice(0, 6))).toEqual({ inserted: 3 }); // step 1 is new
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ lastSeq: 10, lastStep: 3 });
    expect(await counts(runId)).toEqual({ events: 10, metrics: 6, memory: 3, episodes: 3 });
  });

  it("keeps the first value when two events report the same metric at the same step", async () => {
    const runId = await createQueuedRun(services, {});
    await storeEvents(services.db, runId, [
      { seq: 2, ts: 1, type: "metric", step: 1, values: { kl: 0.1 } },
      { seq: 3, ts: 1, type: "metric", step: 1, values: { kl: 0.2 } },
    ]);
    const points = await services.db.metricPoint.findMany({ where: { runId } });
    expect(points.map((p) => [p.name, p.actor, p.value])).toEqual([["kl", "", 0.1]]);
  });

  it("refuses an invalid event, naming it, and stores nothing of the batch", async () => {
    const runId = await createQueuedRun(services, {});
    const bad = { seq: 3, ts: 1, type: "metric", step: -2, values: {} } as unknown as RunEvent;
    await expect(storeEvents(services.db, runId, [sampleEvents(1)[0]!, bad])).rejects.toThrow(/event 1 is not a valid RunEvent: step:/);
    expect(await counts(runId)).toEqual({ events: 1, metrics: 0, memory: 0, episodes: 0 });
  });

  it("lists events after a seq, in order, exactly as they were stored", async () => {
    const runId = await createQueuedRun(services, {});
    const events = sampleEvents(2);
    await storeEvents(services.db, runId, [...events].reverse());
    const after = await listEventsAfter(services.db, runId, 3, 4);
    expect(after).toEqual(events.slice(2, 6));
    expect((await listEventsAfter(services.db, runId, 0, 100)).map((e) => e.seq)).toEqual([1, ...events.map((e) => e.seq)]);
  });
});

describe("run event stream", () => {
  it("gets each seq once, with id <seq>-0, however often a batch is appended", async () => {
    const runId = await createQueuedRun(services, {}); // appends seq 1
    const events = sampleEvents(3);
    await appendToStream(services.redis, runId, events.slice(0, 5));
    await appendToStream(services.redis, runId, events.slice(0, 5)); // retried batch
    await appendToStream(services.redis, runId, events.slice(3).reverse()); // overlapping, out of order
    expect(await streamIds(services.redis, runId)).toEqual(["1-0", ...events.map((e) => `${e.seq}-0`)]);
  });

  it("reads after a cursor, and a blocked read wakes on the next append", async () => {
    const runId = await createQueuedRun(services, {});
    const events = sampleEvents(2);
    await appendToStream(services.redis, runId, events.slice(0, 3));
    expect((await readStreamAfter(services.redis, runId, 2, 0)).map((e) => e.seq)).toEqual([3, 4]);
    expect(await readStreamAfter(services.redis, runId, 4, 0)).toEqual([]);

    const reader = new Redis(serviceUrls().redisUrl);
    try {
      const started = Date.now();
      const blocked = readStreamAfter(reader, runId, 4, 5_000);
      await new Promise((r) => setTimeout(r, 100));
      await appendToStream(services.redis, runId, events.slice(3));
      const got = await blocked;
      expect(got[0]).toEqual(events[3]);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await readStreamAfter(reader, runId, 99, 100)).toEqual([]);
    } finally {
      reader.disconnect();
    }
  });

  it("caps the stream near 10,000 entries", async () => {
    const runId = await createQueuedRun(services, {});
    const many: RunEvent[] = Array.from({ length: 10_500 }, (_, i) => ({ seq: i + 2, ts: 1, type: "log", level: "debug", message: "x" }));
    await appendToStream(services.redis, runId, many);
    const length = await services.redis.xlen(runEventStreamKey(runId));
    expect(length).toBeGreaterThanOrEqual(10_000);
    expect(length).toBeLessThan(10_501);
  });
});
