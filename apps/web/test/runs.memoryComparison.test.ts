import { describe, expect, it } from "vitest";
import { DEMO_SPEC } from "@troupe/contracts";
import { compareMemory, estimateForRun } from "../src/features/runs/lib/memoryComparison";

const peak = (device: string, phase: string, actor: string, bytes: { rss?: number; peak?: number }) => ({
  device,
  phase,
  actor,
  rssBytes: bytes.rss ?? null,
  allocatedBytes: null,
  peakBytes: bytes.peak ?? null,
});

describe("estimate beside measured on the run page", () => {
  it("one row per estimated phase of the demo (a CPU run), matched with the measured peak of the same phase and actor", () => {
    const estimate = estimateForRun(DEMO_SPEC, 6);
    const rows = compareMemory(estimate, [
      peak("cpu", "setup", "", { rss: 400e6 }),
      peak("cpu", "rollout", "", { rss: 450e6, peak: 470e6 }),
      peak("cpu", "update", "student", { rss: 460e6 }),
    ]);
    expect(rows.map((r) => [r.device, r.phase, r.actor])).toEqual([
      ["cpu", "rollout", ""],
      ["cpu", "update", "student"],
    ]);
    // The phase's peak where the runtime reported one, else the sampled RSS; setup is not estimated.
    expect(rows[0]!.measured).toBe(470e6);
    expect(rows[1]!.measured).toBe(460e6);
    expect(rows[1]!.error).toBeCloseTo((rows[1]!.estimate! - 460e6) / 460e6, 10);
  });

  it("an estimated phase not measured yet has no measured value; an unreadable spec has no rows", () => {
    const rows = compareMemory(estimateForRun(DEMO_SPEC, 6), []);
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.measured === null && r.error === null)).toBe(true);
    expect(compareMemory(estimateForRun({ nonsense: true }, 6), [])).toEqual([]);
  });
});
