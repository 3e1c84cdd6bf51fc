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

/** A deterministic wiggly value, so min/max/last per bucket differ. */
const valueAt = (step: number) => Math.sin(step / 7) + step / 1000;

describe("run.metrics / run.memory / run.logs / run.episodes", () => {
  it("returns short series whole and buckets long ones to at most maxPoints (min / max / last), as the client would", async () => {
    const runId = await createBareRun(services);
    const events: RunEvent[] = [];
    let seq = 2;
    for (let step = 1; step <= 2500; step++) {
      const values: Record<string, number> = { "reward/mean": valueAt(step) };
      if (step <= 40) values.loss = 1 / step;
      events.push({ seq: seq++, ts: 1_700_000_000_000 + step, type: "metric", step, actor: "student", values });
    }
    for (let i = 0; i < events.length; i += 500) await storeEvents(services.db, runId, events.slice(i, i + 500));

    const series = (await services.caller.run.metrics({ runId, names: ["reward/mean", "loss", "absent"], maxPoints: 100 })).series.map(fromColumns);
    expect(series.map((s) => [s.name, s.actor, s.total, s.bucketed])).toEqual([
      ["loss", "student", 40, false],
      ["reward/mean", "student", 2500, true],
    ]);
    const loss = series[0]!;
    expect(loss.points.map((p) => p.step)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(loss.points[3]).toEqual({ step: 4, value: 0.25, min: 0.25, max: 0.25 });

    const reward = series[1]!;
    expect(reward.points.length).toBeLessThanOrEqual(100);
    expect(reward.points.length).toBeGreaterThan(90);
    const full = Array.from({ length: 2500 }, (_, i) => ({ step: i + 1, value: valueAt(i + 1), min: valueAt(i + 1), max: valueAt(i + 1) }));
    const expected = bucketByStep(full, 100);
    expect(reward.points.map((p) => p.step)).toEqual(expected.map((p) => p.step));
    // Bucketed as the client would, then sent at 7 significant digits (the charts' wire form).
    expect(reward.points.map((p) => [p.value, p.min, p.max])).toEqual(expected.map((p) => [p.value, p.min, p.max].map(chartPrecision)));
    expect(reward.points.at(-1)?.step).toBe(2500);

    const summary = await services.caller.run.byId({ runId });
    expect(summary.lastReward).toBeCloseTo(valueAt(2500), 12);
    expect(summary.lastStep).toBe(2500);
  });

  it("returns memory per device and phase, with bytes as numbers", async () => {
    const runId = await createBareRun(services);
    const events: RunEvent[] = [];
    let seq = 2;
    for (let step = 1; step <= 3; step++) {
      for (const phase of ["rollout", "update"] as const) {
        events.push({ seq: seq++, ts: 1_700_000_000_000, type: "memory", step, phase, device: "cpu", rssBytes: 5e9 + step * 1e6 + (phase === "update" ? 1 : 0) });
      }
    }
    await storeEvents(services.db, runId, events);
    const { series } = await services.caller.run.memory({ runId });
    expect(series.map((s) => [s.device, s.phase, s.total])).toEqual([
      ["cpu", "rollout", 3],
      ["cpu", "update", 3],
    ]);
    expect(series[1]!.points.map((p) => [p.step, p.seq, p.rssBytes])).toEqual([
      [1, 3, 5_001_000_001],
      [2, 5, 5_002_000_001],
      [3, 7, 5_003_000_001],
    ]);
  });

  it("returns the log tail or the lines after a line number", async () => {
    const runId = await createBareRun(services);
    await services.db.logLine.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({ runId, lineNo: i + 1, stream: i % 2 ? "stderr" : "stdout", text: `line ${i + 1}`, ts: new Date() })),
    });
    const tail = await services.caller.run.logs({ runId, limit: 5 });
    expect(tail.lines.map((l) => l.lineNo)).toEqual([26, 27, 28, 29, 30]);
    expect(tail.lastLineNo).toBe(30);
    const after = await services.caller.run.logs({ runId, afterLineNo: 10, limit: 3 });
    expect(after.lines.map((l) => l.text)).toEqual(["line 11", "line 12", "line 13"]);
  });

  it("returns the latest step's episodes, or a chosen step's", async () => {
    const runId = await createBareRun(services);
    const events: RunEvent[] = [];
    let seq = 2;
    for (let step = 1; step <= 3; step++) {
      for (let sample = 0; sample < 2; sample++) {
        events.push({
          seq: seq++,
          ts: 1_700_000_000_000,
          type: "episode",
          step,
          environment: "echo",
          group: 0,
          sample,
          messages: [
            { actor: "student", role: "user", content: "say k:", trained: false },
            { actor: "student", role: "assistant", content: `<b>kk</b> ${step}`, trained: true },
          ],
          reward: step / 3,
          rewardComponents: { letter_match: step / 3 },
        });
      }
    }
    await storeEvents(services.db, runId, events);
    const latest = await services.caller.run.episodes({ runId });
    expect(latest.step).toBe(3);
    expect(latest.recentSteps).toEqual([3, 2, 1]);
    expect(latest.episodes.map((e) => [e.step, e.sample])).toEqual([
      [3, 0],
      [3, 1],
    ]);
    expect(latest.episodes[0]!.messages[1]!.content).toBe("<b>kk</b> 3");
    const first = await services.caller.run.episodes({ runId, step: 1 });
    expect(first.episodes.map((e) => e.reward)).toEqual([1 / 3, 1 / 3]);
  });

  it("paginates run.list with a cursor, newest first", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createBareRun(services));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { id: string }[]; nextCursor: string | null } = await services.caller.run.list({ limit: 2, cursor, status: "running" });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor && !ids.every((id) => seen.includes(id)));
    const mine = seen.filter((id) => ids.includes(id));
    expect(mine).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);
  });
});
