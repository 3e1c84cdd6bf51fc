import type { MemoryEvent, RunEvent } from "@troupe/contracts";
import { rewindRunAfterStep, storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryBucketWidth, memoryRollupLevel } from "../src/features/runs/server/memorySeries";
import { createBareRun, openServices, type TestServices } from "./helpers/services";
import type { LiveMemorySample } from "../src/features/live/liveRunData";
import { fullScanPeaks } from "./helpers/fullScanPeaks";

/**
 * Memory rollups: the trigger that keeps MemoryRollup (every level equals a rollup of the samples,
 * across batches, replays and a rewind), and the readers (peaks equal the previous full-scan query;
 * bucketed series hold exactly the highest values of the samples they cover, so no peak is lost).
 */

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

const GiB = 2 ** 30;
/** Rollup levels 4..20: blocks of 2^level steps. */
const LEVELS = Array.from({ length: 17 }, (_, i) => i + 4);
const FIELDS = ["rssBytes", "allocatedBytes", "reservedBytes", "peakBytes"] as const;
type Field = (typeof FIELDS)[number];

/** Deterministic noise (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SPIKE_STEP = 3217;

/**
 * Steps 1..5000 of a two-actor run: host RSS per rollout (twice on every 7th step; capped), two
 * setup samples without readings, alice's rollout
 * and update on cuda:0 (update's peak missing on every 5th step; an 80 GiB spike at SPIKE_STEP), bob's
 * update every 3rd step, alice's reference only on steps 100..400 (a short series), and bob's weight
 * sync on cuda:1 every 500 steps (a sparse one).
 */
function memoryEvents(): MemoryEvent[] {
  const rnd = random(7);
  const out: MemoryEvent[] = [];
  let seq = 2;
  const gpu = (base: number) => ({
    allocatedBytes: Math.round(base * GiB + rnd() * GiB),
    reservedBytes: Math.round((base + 2) * GiB + rnd() * GiB),
    peakBytes: Math.round((base + 1) * GiB + rnd() * 2 * GiB),
  });
  for (let step = 1; step <= 5000; step++) {
    const ts = 1_700_000_000_000 + step * 1000;
    const e = (phase: MemoryEvent["phase"], device: string, actor: string | undefined, bytes: Partial<Record<Field, number>>) =>
      out.push({ seq: seq++, ts, type: "memory", step, phase, device, ...(actor ? { actor } : {}), ...bytes });
    // RSS is capped, so its highest value is reached many times: the peak's step is the first of them.
    const rss = () => ({ rssBytes: Math.min(8.5 * GiB, Math.round(8 * GiB + rnd() * GiB)) });
    e("rollout", "cpu", undefined, rss());
    if (step % 7 === 0) e("rollout", "cpu", undefined, rss());
    // A sample with no readings at all (the runtime may report none): its peak step is its first step.
    if (step === 1 || step === 2) e("setup", "cpu", undefined, {});
    e("rollout", "cuda:0", "alice", gpu(20));
    const update = gpu(30);
    if (step === SPIKE_STEP) update.peakBytes = 80 * GiB;
    e("update", "cuda:0", "alice", step % 5 === 0 ? { allocatedBytes: update.allocatedBytes, reservedBytes: update.reservedBytes } : update);
    if (step % 3 === 0) e("update", "cuda:0", "bob", gpu(25));
    if (step >= 100 && step <= 400) e("reference", "cuda:0", "alice", gpu(22));
    if (step % 500 === 0) e("weight_sync", "cuda:1", "bob", gpu(5));
  }
  return out;
}

async function storeInBatches(runId: string, events: RunEvent[], size: number) {
  for (let i = 0; i < events.length; i += size) await storeEvents(services.db, runId, events.slice(i, i + size));
}

/** A memory sample as the runtime reports it (the live stream's shape). */
type Sample = LiveMemorySample;

async function samplesOf(runId: string): Promise<Sample[]> {
  const rows = await services.db.memorySample.findMany({ where: { runId }, orderBy: { seq: "asc" } });
  const n = (v: bigint | null) => (v === null ? null : Number(v));
  return rows.map((r) => ({ ...r, rssBytes: n(r.rssBytes), allocatedBytes: n(r.allocatedBytes), reservedBytes: n(r.reservedBytes), peakBytes: n(r.peakBytes) }));
}

const maxOf = (values: (number | null)[]) => values.reduce<number | null>((m, v) => (v === null ? m : m === null ? v : Math.max(m, v)), null);
const top = (s: Sample) => s.peakBytes ?? s.allocatedBytes ?? s.rssBytes;

/** What MemoryRollup should hold for these samples, computed here from scratch, keyed and sorted like the table. */
function expectedRollups(samples: Sample[]) {
  const blocks = new Map<string, Sample[]>();
  for (const s of samples) {
    for (const level of LEVELS) {
      const key = JSON.stringify([level, s.device, s.actor, s.phase, Math.floor(s.step / 2 ** level)]);
      blocks.set(key, [...(blocks.get(key) ?? []), s]);
    }
  }
  return [...blocks.entries()]
    .map(([key, list]) => {
      const [level, device, actor, phase, bucket] = JSON.parse(key) as [number, string, string, string, number];
      const topBytes = maxOf(list.map(top));
      const atTop = list.filter((s) => top(s) === topBytes).map((s) => s.step);
      return {
        level,
        device,
        actor,
        phase,
        bucket,
        firstStep: Math.min(...list.map((s) => s.step)),
        lastStep: Math.max(...list.map((s) => s.step)),
        lastSeq: Math.max(...list.map((s) => s.seq)),
        count: list.length,
        ...Object.fromEntries(FIELDS.map((f) => [f, maxOf(list.map((s) => s[f]))])),
        topBytes,
        topStep: Math.min(...atTop),
      };
    })
    .sort((a, b) => JSON.stringify([a.level, a.device, a.actor, a.phase]).localeCompare(JSON.stringify([b.level, b.device, b.actor, b.phase])) || a.bucket - b.bucket);
}

async function storedRollups(runId: string) {
  const rows = await services.db.memoryRollup.findMany({ where: { runId } });
  const n = (v: bigint | null) => (v === null ? null : Number(v));
  return rows
    .map(({ runId: _, ...r }) => ({
      ...r,
      rssBytes: n(r.rssBytes),
      allocatedBytes: n(r.allocatedBytes),
      reservedBytes: n(r.reservedBytes),
      peakBytes: n(r.peakBytes),
      topBytes: n(r.topBytes),
    }))
    .sort((a, b) => JSON.stringify([a.level, a.device, a.actor, a.phase]).localeCompare(JSON.stringify([b.level, b.device, b.actor, b.phase])) || a.bucket - b.bucket);
}

/** One series bucketed straight from its samples by aligned blocks of `width` steps: the reference for a series read without rollups. */
async function rawBucketed(runId: string, key: { device: string; actor: string; phase: string }, width: number) {
  const rows = await services.db.$queryRaw<Record<string, unknown>[]>`
    SELECT max(step)::int AS step, max(seq)::int AS seq,
           max("rssBytes")::float8 AS "rssBytes", max("allocatedBytes")::float8 AS "allocatedBytes",
           max("reservedBytes")::float8 AS "reservedBytes", max("peakBytes")::float8 AS "peakBytes"
    FROM "MemorySample"
    WHERE "runId" = ${runId} AND device = ${key.device} AND phase = ${key.phase} AND actor = ${key.actor}
    GROUP BY step / ${width}::int
    ORDER BY 1, 2`;
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : Number(v)])));
}

type Series = Awaited<ReturnType<TestServices["caller"]["run"]["memory"]>>["series"][number];

/**
 * A bucketed series must be an exact partition of its samples by step: point i covers the samples in
 * (step of point i-1, step of point i], all in one aligned block of the series' bucket width, and
 * holds their highest value of every column and their highest seq. So every sample's value is in the
 * chart and nothing is counted twice.
 */
function expectExactCover(series: Series, samples: Sample[], maxPoints: number) {
  const own = samples.filter((s) => s.device === series.device && s.actor === series.actor && s.phase === series.phase);
  expect(series.total).toBe(own.length);
  expect(series.points.length).toBeLessThanOrEqual(maxPoints);
  const steps = own.map((s) => s.step);
  const width = series.bucketed ? memoryBucketWidth(Math.min(...steps), Math.max(...steps), maxPoints) : 0;
  let prev = -Infinity;
  let covered = 0;
  for (const p of series.points) {
    const inside = own.filter((s) => s.step > prev && s.step <= p.step);
    expect(inside.length, `bucket ending at step ${p.step}`).toBeGreaterThan(0);
    expect(Math.max(...inside.map((s) => s.step))).toBe(p.step);
    if (series.bucketed) expect(new Set(inside.map((s) => Math.floor(s.step / width))).size, `block of step ${p.step}`).toBe(1);
    else expect(inside).toHaveLength(1);
    expect(p.seq).toBe(Math.max(...inside.map((s) => s.seq)));
    for (const f of FIELDS) expect(p[f], `${f} of the bucket ending at step ${p.step}`).toBe(maxOf(inside.map((s) => s[f])));
    covered += inside.length;
    prev = p.step;
  }
  expect(covered).toBe(own.length);
}

describe("memory rollups", () => {
  let runId: string;
  let samples: Sample[];
  const events = memoryEvents();

  beforeAll(async () => {
    runId = await createBareRun(services);
    // Uneven batches, so the trigger merges later samples into blocks that already exist.
    await storeInBatches(runId, events, 1777);
    samples = await samplesOf(runId);
  });

  it("the trigger keeps every level equal to a rollup of the samples, and a replayed batch changes nothing", async () => {
    expect(samples).toHaveLength(events.length);
    const expected = expectedRollups(samples);
    expect(await storedRollups(runId)).toEqual(expected);
    await storeInBatches(runId, events.slice(1000, 4000), 500);
    expect(await storedRollups(runId)).toEqual(expected);
  });

  it("peaks per device, actor and phase equal the full-scan query, and name the spike's phase, actor and step", async () => {
    const { peaks } = await services.caller.run.memoryPeaks({ runId });
    expect(peaks).toEqual(await fullScanPeaks(services.db, runId));
    expect(peaks.map((p) => `${p.device}/${p.actor}/${p.phase}`)).toEqual([
      "cpu//rollout",
      "cpu//setup",
      "cuda:0/alice/reference",
      "cuda:0/alice/rollout",
      "cuda:0/alice/update",
      "cuda:0/bob/update",
      "cuda:1/bob/weight_sync",
    ]);
    const highest = peaks.reduce((a, b) => ((b.peakBytes ?? 0) > (a.peakBytes ?? 0) ? b : a));
    expect(highest).toMatchObject({ device: "cuda:0", actor: "alice", phase: "update", peakBytes: 80 * GiB, atStep: SPIKE_STEP });
    const firstCapped = samples.find((s) => s.phase === "rollout" && s.rssBytes === 8.5 * GiB)!.step;
    expect(peaks.find((p) => p.phase === "rollout" && p.device === "cpu")).toMatchObject({ rssBytes: 8.5 * GiB, atStep: firstCapped });
    expect(samples.filter((s) => s.rssBytes === 8.5 * GiB).length).toBeGreaterThan(1000); // ties in every batch
    expect(peaks.find((p) => p.phase === "setup")).toMatchObject({ samples: 2, rssBytes: null, peakBytes: null, atStep: 1, lastStep: 2 });
  });

  it("series are bucketed from rollup blocks to the width asked for, each bucket the exact maximum of its samples", async () => {
    // 100 points over 5000 steps: 64-step blocks (level 6); 10 points: 512-step blocks (level 9); the
    // reference phase (steps 100..400) in 100 points: 4-step buckets, made from the samples themselves.
    const widths = [memoryBucketWidth(1, 5000, 100), memoryBucketWidth(1, 5000, 10), memoryBucketWidth(100, 400, 100)];
    expect(widths).toEqual([64, 512, 4]);
    expect(widths.map(memoryRollupLevel)).toEqual([6, 9, 0]);
    expect(memoryRollupLevel(2 ** 24)).toBe(20);
    for (const maxPoints of [100, 10]) {
      const { series } = await services.caller.run.memory({ runId, maxPoints });
      expect(series.map((s) => [s.device, s.phase, s.actor, s.bucketed])).toEqual([
        ["cpu", "rollout", "", true],
        ["cpu", "setup", "", false],
        ["cuda:0", "reference", "alice", true],
        ["cuda:0", "rollout", "alice", true],
        ["cuda:0", "update", "alice", true],
        ["cuda:0", "update", "bob", true],
        ["cuda:1", "weight_sync", "bob", false],
      ]);
      for (const s of series) expectExactCover(s, samples, maxPoints);
      const update = series.find((s) => s.phase === "update" && s.actor === "alice")!;
      expect(Math.max(...update.points.map((p) => p.peakBytes ?? 0))).toBe(80 * GiB);
    }
  });

  it("a short series is bucketed from its samples; a sparse one comes back raw; a device filter keeps one device", async () => {
    const { series } = await services.caller.run.memory({ runId, maxPoints: 100 });
    const reference = series.find((s) => s.phase === "reference")!;
    const { points: _, ...head } = reference;
    expect(head).toEqual({ device: "cuda:0", phase: "reference", actor: "alice", total: 301, bucketed: true });
    expect(reference.points).toEqual(await rawBucketed(runId, reference, 4));

    const sync = series.find((s) => s.phase === "weight_sync")!;
    const own = samples.filter((s) => s.phase === "weight_sync");
    expect(sync.points).toEqual(own.map((s) => ({ step: s.step, seq: s.seq, rssBytes: null, allocatedBytes: s.allocatedBytes, reservedBytes: s.reservedBytes, peakBytes: s.peakBytes })));

    const cuda1 = await services.caller.run.memory({ runId, device: "cuda:1" });
    expect(cuda1.series.map((s) => [s.device, s.phase, s.total])).toEqual([["cuda:1", "weight_sync", 10]]);
  });

  it("a rewind to a checkpoint rebuilds the blocks it cut, so rollups, peaks and series forget the later steps", async () => {
    const rewound = await createBareRun(services);
    await storeInBatches(rewound, events, 2500);
    await rewindRunAfterStep(services.db, rewound, 3000);
    const left = await samplesOf(rewound);
    expect(Math.max(...left.map((s) => s.step))).toBe(3000);
    expect(await storedRollups(rewound)).toEqual(expectedRollups(left));

    const { peaks } = await services.caller.run.memoryPeaks({ runId: rewound });
    expect(peaks).toEqual(await fullScanPeaks(services.db, rewound));
    expect(peaks.find((p) => p.phase === "update" && p.actor === "alice")!.peakBytes).toBeLessThan(80 * GiB);
    const { series } = await services.caller.run.memory({ runId: rewound, maxPoints: 50 });
    for (const s of series) expectExactCover(s, left, 50);
  });

  it("a series longer than one summary block (2^20 steps) is summed over its blocks; a tie keeps the first step", async () => {
    const long = await createBareRun(services);
    const at = (seq: number, step: number, peakBytes: number): MemoryEvent =>
      ({ seq, ts: 1_700_000_000_000 + seq, type: "memory", step, phase: "update", device: "cuda:0", actor: "alice", peakBytes });
    await storeEvents(services.db, long, [at(2, 10, 5 * GiB), at(3, 1_500_000, 9 * GiB), at(4, 2_100_000, 9 * GiB)]);
    await storeEvents(services.db, long, [at(5, 1_200_000, 9 * GiB), at(6, 3_000_000, 1 * GiB)]);
    const { peaks } = await services.caller.run.memoryPeaks({ runId: long });
    expect(peaks).toEqual(await fullScanPeaks(services.db, long));
    expect(peaks).toMatchObject([{ samples: 5, peakBytes: 9 * GiB, atStep: 1_200_000, lastStep: 3_000_000 }]);
    const { series } = await services.caller.run.memory({ runId: long, maxPoints: 10 });
    expect(series[0]!.points.map((p) => [p.step, p.peakBytes])).toEqual([
      [10, 5 * GiB],
      [1_200_000, 9 * GiB],
      [1_500_000, 9 * GiB],
      [2_100_000, 9 * GiB],
      [3_000_000, 1 * GiB],
    ]);

    // 20 samples over 20M steps in 10 points: 2^21-step buckets, wider than the coarsest blocks (2^20),
    // so those blocks are grouped.
    await storeEvents(services.db, long, [...Array.from({ length: 14 }, (_, k) => at(7 + k, (k + 1) * 210_000, (k + 1) * GiB)), at(21, 20_000_000, 2 * GiB)]);
    expect(memoryBucketWidth(10, 20_000_000, 10)).toBe(2 ** 21);
    const wide = await services.caller.run.memory({ runId: long, maxPoints: 10 });
    expect(wide.series[0]!.bucketed).toBe(true);
    expectExactCover(wide.series[0]!, await samplesOf(long), 10);
  });

  it("a run with no memory samples has no series and no peaks", async () => {
    const empty = await createBareRun(services);
    expect(await services.caller.run.memory({ runId: empty })).toEqual({ series: [] });
    expect(await services.caller.run.memoryPeaks({ runId: empty })).toEqual({ peaks: [] });
  });
});
