import type { RunEvent } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chartPrecision, fromColumns } from "../src/features/runs/lib/seriesColumns";
import { bucketByStep } from "../src/lib/buckets";
import { createBareRun, openServices, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

/** `run.metrics`, its columns turned back into points. */
async function metrics(input: Parameters<TestServices["caller"]["run"]["metrics"]>[0]) {
  const { series } = await services.caller.run.metrics(input);
  return { series: series.map(fromColumns) };
}

const valueAt = (step: number) => Math.cos(step / 11) + (step === 3217 ? 100 : 0) + (step === 4001 ? -100 : 0);

async function seedSeries(runId: string, steps: number) {
  const events: RunEvent[] = [];
  let seq = 2;
  for (let step = 1; step <= steps; step++) {
    events.push({ seq: seq++, ts: 1_700_000_000_000 + step * 1000, type: "metric", step, actor: "alice", values: { "reward/mean": valueAt(step), loss: step } });
    if (step % 2 === 0) events.push({ seq: seq++, ts: 1_700_000_000_000 + step * 1000, type: "metric", step, actor: "bob", values: { "reward/mean": -valueAt(step) } });
  }
  for (let i = 0; i < events.length; i += 1000) await storeEvents(services.db, runId, events.slice(i, i + 1000));
}

describe("bucketed series (pixel width, zoom, spikes)", () => {
  it("discovers every (metric, actor) series with its step range", async () => {
    const runId = await createBareRun(services);
    await seedSeries(runId, 50);
    const { series } = await services.caller.run.metricNames({ runId });
    expect(series).toEqual([
      { name: "loss", actor: "alice", firstStep: 1, lastStep: 50 },
      { name: "reward/mean", actor: "alice", firstStep: 1, lastStep: 50 },
      { name: "reward/mean", actor: "bob", firstStep: 2, lastStep: 50 },
    ]);
  });

  it("buckets to the width asked for, keeps single-step spikes in min/max, and re-buckets a zoomed range", async () => {
    const runId = await createBareRun(services);
    await seedSeries(runId, 6000);
    const full = Array.from({ length: 6000 }, (_, i) => ({ step: i + 1, value: valueAt(i + 1), min: valueAt(i + 1), max: valueAt(i + 1) }));

    const whole = await metrics({ runId, names: ["reward/mean"], actors: ["alice"], maxPoints: 300 });
    const alice = whole.series[0]!;
    expect(alice).toMatchObject({ name: "reward/mean", actor: "alice", total: 6000, bucketed: true });
    const expected = bucketByStep(full, 300);
    expect(alice.points.map((p) => [p.step, p.value, p.min, p.max])).toEqual(expected.map((p) => [p.step, ...[p.value, p.min, p.max].map(chartPrecision)]));
    expect(Math.max(...alice.points.map((p) => p.max))).toBe(chartPrecision(valueAt(3217)));
    expect(Math.min(...alice.points.map((p) => p.min))).toBe(chartPrecision(valueAt(4001)));

    // Zoom on steps 3000..3500: re-bucketed over that range only; the spike is still there.
    const zoomed = await metrics({ runId, names: ["reward/mean"], actors: ["alice"], maxPoints: 100, fromStep: 3000, toStep: 3500 });
    const z = zoomed.series[0]!;
    expect(z.total).toBe(501);
    expect(z.points[0]!.step).toBeGreaterThanOrEqual(3000);
    expect(z.points.at(-1)!.step).toBe(3500);
    const expectedZoom = bucketByStep(full.slice(2999, 3500), 100);
    expect(z.points.map((p) => [p.step, p.min, p.max])).toEqual(expectedZoom.map((p) => [p.step, chartPrecision(p.min), chartPrecision(p.max)]));
    expect(z.points.some((p) => p.max === chartPrecision(valueAt(3217)))).toBe(true);

    // A narrow zoom comes back raw, with times when asked.
    const raw = await metrics({ runId, names: ["reward/mean"], maxPoints: 100, fromStep: 10, toStep: 20, withTime: true });
    expect(raw.series.map((s) => [s.actor, s.bucketed, s.points.length])).toEqual([
      ["alice", false, 11],
      ["bob", false, 6],
    ]);
    const v10 = chartPrecision(valueAt(10));
    expect(raw.series[0]!.points[0]).toEqual({ step: 10, value: v10, min: v10, max: v10, ts: 1_700_000_000_000 + 10_000 });
  });

  it("rejects a reversed range, naming the field", async () => {
    const runId = await createBareRun(services);
    await expect(services.caller.run.metrics({ runId, names: ["loss"], fromStep: 10, toStep: 5 })).rejects.toThrow(/fromStep/);
  });
});

describe("rollup blocks (long series)", () => {
  it("a 200k-step series is bucketed from trigger-kept blocks: totals, spikes, last values and partial edge blocks all right", async () => {
    const runId = await createBareRun(services);
    // Two inserts, so the trigger merges a second batch into existing blocks.
    const insert = (from: number, to: number) => services.db.$executeRaw`
      INSERT INTO "MetricPoint" ("runId", name, actor, step, value, ts)
      SELECT ${runId}, 'kl', 'alice', g, CASE WHEN g = 123457 THEN 99 WHEN g = 7 THEN -99 ELSE (g % 1000) / 1000.0 END, to_timestamp(g)
      FROM generate_series(${from}::int, ${to}::int) g`;
    await insert(1, 150_000);
    await insert(150_001, 200_000);
    const at = (step: number) => (step === 123457 ? 99 : step === 7 ? -99 : (step % 1000) / 1000);

    const { series } = await metrics({ runId, names: ["kl"], maxPoints: 500 });
    const s = series[0]!;
    expect(s).toMatchObject({ total: 200_000, bucketed: true });
    expect(s.points.length).toBeLessThanOrEqual(500);
    expect(s.points.at(-1)!.step).toBe(200_000);
    expect(Math.max(...s.points.map((p) => p.max))).toBe(99);
    expect(Math.min(...s.points.map((p) => p.min))).toBe(-99);
    for (const p of s.points) {
      expect(p.value).toBeCloseTo(at(p.step), 12);
      expect(p.min).toBeLessThanOrEqual(p.value);
      expect(p.max).toBeGreaterThanOrEqual(p.value);
    }
    expect([...s.points.map((p) => p.step)].sort((a, b) => a - b)).toEqual(s.points.map((p) => p.step));

    // With times: each bucket's time is its last point's, as stored.
    const timed = (await metrics({ runId, names: ["kl"], maxPoints: 500, withTime: true })).series[0]!;
    const stored = await services.db.metricPoint.findMany({ where: { runId, name: "kl", step: { in: timed.points.map((p) => p.step) } }, select: { step: true, ts: true } });
    const storedTs = new Map(stored.map((r) => [r.step, r.ts.getTime()]));
    expect(timed.points.map((p) => p.ts)).toEqual(timed.points.map((p) => storedTs.get(p.step)));

    // A zoom whose ends fall inside blocks: the edge points are read raw, nothing counted twice.
    const zoomed = await metrics({ runId, names: ["kl"], maxPoints: 200, fromStep: 12_345, toStep: 123_460 });
    const z = zoomed.series[0]!;
    expect(z.total).toBe(123_460 - 12_345 + 1);
    expect(z.points[0]!.step).toBeGreaterThanOrEqual(12_345);
    expect(z.points.at(-1)!.step).toBe(123_460);
    expect(Math.max(...z.points.map((p) => p.max))).toBe(99);
    expect(Math.min(...z.points.map((p) => p.min))).toBe(0);
  });
});
