import { describe, expect, it } from "vitest";
import { parseServerEnv } from "../src/env";
import { furthest, mergeSeries, LiveRunData } from "../src/features/live/liveRunData";
import { parseCursor, sseMessage } from "../src/features/live/server/sse";
import { applyOverrides, gpusFor } from "../src/features/experiments/server/launch";
import { bucketByStep } from "../src/lib/buckets";
import { formatBytes } from "../src/lib/format";
import { DEMO_SPEC, RunSpec } from "@troupe/contracts";
import { claimedGpus } from "../src/features/runs/server/createRun";

const pt = (step: number, value: number) => ({ step, value, min: value, max: value });

describe("bucketByStep", () => {
  it("keeps a short series as it is", () => {
    const points = [pt(1, 1), pt(2, 2)];
    expect(bucketByStep(points, 10)).toEqual(points);
  });
  it("cuts a long series into at most maxPoints buckets keeping last, min and max", () => {
    const points = Array.from({ length: 10 }, (_, i) => pt(i + 1, i % 2 ? -(i + 1) : i + 1));
    const out = bucketByStep(points, 5);
    expect(out).toEqual([
      { step: 2, value: -2, min: -2, max: 1 },
      { step: 4, value: -4, min: -4, max: 3 },
      { step: 6, value: -6, min: -6, max: 5 },
      { step: 8, value: -8, min: -8, max: 7 },
      { step: 10, value: -10, min: -10, max: 9 },
    ]);
  });
});

describe("mergeSeries (history + live)", () => {
  it("draws a point that is both in the history and live once, in step order", () => {
    const merged = mergeSeries({ bucketed: false, points: [pt(1, 1), pt(2, 2)] }, new Map([[2, 2], [3, 3]]), 1000);
    expect(merged.map((p) => p.step)).toEqual([1, 2, 3]);
  });
  it("skips live points inside a bucketed history's range", () => {
    const merged = mergeSeries({ bucketed: true, points: [pt(50, 1), pt(100, 2)] }, new Map([[99, 9], [101, 3]]), 1000);
    expect(merged.map((p) => p.step)).toEqual([50, 100, 101]);
  });
  it("applies live metric, memory and status events keyed, so replays change nothing", () => {
    const live = new LiveRunData();
    const events = [
      { seq: 5, ts: 0, type: "metric" as const, step: 1, actor: "a", values: { loss: 2 } },
      { seq: 6, ts: 0, type: "memory" as const, step: 1, phase: "update" as const, device: "cpu", rssBytes: 10 },
      { seq: 7, ts: 0, type: "status" as const, state: "running" as const },
    ];
    live.apply(events);
    live.apply(events);
    expect(live.actorsOf("loss")).toEqual(["a"]);
    expect(live.memory.size).toBe(1);
    expect(live.lastStatus?.state).toBe("running");
  });
});

describe("furthest status", () => {
  it("never steps back from what either source has seen", () => {
    expect(furthest("succeeded", "running")).toBe("succeeded");
    expect(furthest("running", "succeeded")).toBe("succeeded");
    expect(furthest("running", "queued")).toBe("running");
    expect(furthest(undefined, "queued")).toBe("queued");
    expect(furthest("cancelled", "failed")).toBe("failed");
    expect(furthest("paused", "running")).toBe("paused"); // the stream saw the pause before the row
    expect(furthest("running", "paused")).toBe("running"); // ... and the resume
    expect(furthest("running", "stopped")).toBe("stopped");
  });
});

describe("SSE helpers", () => {
  it("frames an event with its seq as the id", () => {
    expect(sseMessage({ seq: 3, ts: 1, type: "log", level: "info", message: "a\nb" })).toBe(
      'id: 3\ndata: {"seq":3,"ts":1,"type":"log","level":"info","message":"a\\nb"}\n\n',
    );
  });
  it("prefers Last-Event-ID over ?after and refuses garbage", () => {
    expect(parseCursor("12", "3")).toBe(12);
    expect(parseCursor(null, "3")).toBe(3);
    expect(parseCursor(null, null)).toBe(0);
    expect(parseCursor("-1", null)).toBeNull();
    expect(parseCursor(null, "abc")).toBeNull();
    // Seqs are Postgres ints: one above the largest is refused, not looped on.
    expect(parseCursor(null, "2147483647")).toBe(2147483647);
    expect(parseCursor(null, "2147483648")).toBeNull();
    expect(parseCursor("9999999999", null)).toBeNull();
  });
});

describe("launch helpers", () => {
  it("writes overrides into the spec without touching the rest", () => {
    const spec = { seed: 1, trainer: { steps: 10, promptsPerStep: 4 } };
    expect(applyOverrides(spec, { steps: 3 })).toEqual({ seed: 1, trainer: { steps: 3, promptsPerStep: 4 } });
    expect(applyOverrides(spec, { seed: 9 })).toEqual({ seed: 9, trainer: { steps: 10, promptsPerStep: 4 } });
    expect(spec.trainer.steps).toBe(10);
  });
  it("asks for no GPU on CPU", () => {
    expect(gpusFor(DEMO_SPEC)).toBe(0);
  });
  it('asks for one GPU per local model when trainer.device is "auto" and nothing is placed (issue #25: it asked for none)', () => {
    const auto = RunSpec.parse({ ...DEMO_SPEC, trainer: { ...DEMO_SPEC.trainer, device: "auto" } });
    expect(gpusFor(auto)).toBe(1);
    const twoActors = RunSpec.parse({ ...auto, actors: [auto.actors[0], { ...auto.actors[0], name: "rival" }] });
    expect(gpusFor(twoActors)).toBe(2);
    // The launcher may claim fewer (they share) or none (CPU) for an unplaced auto run, not for a placed one.
    expect(claimedGpus(twoActors, 1)).toBe(1);
    expect(claimedGpus(twoActors, 0)).toBe(0);
    const placed = RunSpec.parse({ ...auto, actors: [{ ...auto.actors[0], placement: { gpus: [1] } }] });
    expect(gpusFor(placed)).toBe(1);
    expect(() => claimedGpus(placed, 0)).toThrow(/invalid launch/);
    expect(() => claimedGpus(DEMO_SPEC, 1)).toThrow(/invalid launch/);
  });
});

describe("env", () => {
  it("names the missing or wrong variable", () => {
    expect(() => parseServerEnv({ REDIS_URL: "redis://x" })).toThrow(/DATABASE_URL is required/);
    expect(() => parseServerEnv({ DATABASE_URL: "mysql://x", REDIS_URL: "redis://x" })).toThrow(/DATABASE_URL must be a postgresql:\/\/ URL/);
    expect(() => parseServerEnv({ DATABASE_URL: "postgresql://x", REDIS_URL: "redis://x", PORT: "http" })).toThrow(/PORT/);
    expect(parseServerEnv({ DATABASE_URL: "postgresql://x", REDIS_URL: "redis://x" }).PORT).toBe(3000);
  });

  it("validates the abuse limits, with defaults a small team never notices", () => {
    const base = { DATABASE_URL: "postgresql://x", REDIS_URL: "redis://x" };
    expect(parseServerEnv(base)).toMatchObject({
      TROUPE_SIGNIN_ACCOUNT_LIMIT: 10,
      TROUPE_SIGNIN_ADDRESS_LIMIT: 50,
      TROUPE_SIGNIN_WINDOW_S: 900,
      TROUPE_PASSWORD_HASH_CONCURRENCY: 2,
      TROUPE_LIVE_STREAMS_PER_USER: 20,
      TROUPE_LIVE_STREAMS_PER_TOKEN: 10,
      TROUPE_LIVE_HEARTBEAT_MS: 15_000,
    });
    expect(parseServerEnv({ ...base, TROUPE_LIVE_STREAMS_PER_USER: "5" }).TROUPE_LIVE_STREAMS_PER_USER).toBe(5);
    expect(() => parseServerEnv({ ...base, TROUPE_LIVE_STREAMS_PER_USER: "0" })).toThrow(/TROUPE_LIVE_STREAMS_PER_USER/);
    expect(() => parseServerEnv({ ...base, TROUPE_LIVE_HEARTBEAT_MS: "fast" })).toThrow(/TROUPE_LIVE_HEARTBEAT_MS/);
    expect(() => parseServerEnv({ ...base, TROUPE_PASSWORD_HASH_CONCURRENCY: "1.5" })).toThrow(/TROUPE_PASSWORD_HASH_CONCURRENCY/);
  });
});

describe("formatBytes (memory, checkpoints, datasets, the memory estimate)", () => {
  it("uses binary units with three significant digits", () => {
    expect([formatBytes(0), formatBytes(1023), formatBytes(1024), formatBytes(12_345), formatBytes(3.42 * 2 ** 20)]).toEqual(["0 B", "1023 B", "1.00 KiB", "12.1 KiB", "3.42 MiB"]);
    expect([formatBytes(512 * 2 ** 20), formatBytes(17_508 * 2 ** 20), formatBytes(1.5 * 2 ** 40)]).toEqual(["512 MiB", "17.1 GiB", "1.50 TiB"]);
  });
  it("goes one unit up rather than print 1024 of one", () => {
    expect(formatBytes(1023.7 * 2 ** 20)).toBe("1.00 GiB");
    expect(formatBytes(999.4 * 2 ** 20)).toBe("999 MiB");
  });
  it("shows a missing value as a dash", () => {
    expect(formatBytes(null)).toBe("—");
    expect(formatBytes(Number.NaN)).toBe("—");
  });
});
