import { DEMO_SPEC_INPUT, RunSpec } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { compareMemory, estimateForRun } from "../src/features/runs/lib/memoryComparison";
import { memoryTarget, offerHasCuda } from "../src/features/runs/lib/memoryTarget";

/** One spec, one story: the estimate is for the memory of the host it runs (or ran) on. */
const autoSpec = RunSpec.parse({ ...DEMO_SPEC_INPUT, trainer: { ...DEMO_SPEC_INPUT.trainer, device: "auto" } });

describe("which memory the estimate is about", () => {
  it("queued on CPU-only runners: host memory, not cuda:0", () => {
    const target = memoryTarget(autoSpec, { liveRunners: [{ cuda: false }] });
    expect(target.device).toBe("cpu");
    const estimate = estimateForRun(autoSpec, 8, target.device)!;
    expect(estimate.phases.every((p) => p.device === "cpu")).toBe(true);
  });

  it("finished on the CPU: the estimate's rows meet the measured ones (no \"No local model\")", () => {
    const peaks = [{ device: "cpu", actor: "", phase: "rollout", rssBytes: 300e6, allocatedBytes: null, peakBytes: 320e6 }];
    const target = memoryTarget(autoSpec, { measuredDevices: ["cpu"], liveRunners: [{ cuda: true }] });
    expect(target.device).toBe("cpu");
    const rows = compareMemory(estimateForRun(autoSpec, 8, target.device), peaks);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.find((r) => r.phase === "rollout")?.measured).toBe(320e6);
    // What it did before: estimated for cuda:0, filtered against cpu measurements, nothing left.
    expect(compareMemory(estimateForRun(autoSpec, 8, "gpu"), peaks)).toEqual([]);
  });

  it("the spec's own device decides first; GPUs when a live runner has one", () => {
    expect(memoryTarget({ trainer: { device: "cpu" } }, { liveRunners: [{ cuda: true }] }).device).toBe("cpu");
    expect(memoryTarget({ trainer: { device: "cuda" } }, { liveRunners: [{ cuda: false }] }).device).toBe("gpu");
    expect(memoryTarget(autoSpec, { liveRunners: [{ cuda: false }, { cuda: true }] }).device).toBe("gpu");
    expect(memoryTarget(autoSpec, { measuredDevices: ["cpu", "cuda:0"] }).device).toBe("gpu");
  });

  it("a runner has a GPU when it reports CUDA and hands out GPUs", () => {
    expect(offerHasCuda({ capabilities: { cuda: "12.8", gpus: [{}] }, gpus: [{}] })).toBe(true);
    expect(offerHasCuda({ capabilities: { cuda: null, gpus: [] }, gpus: [] })).toBe(false);
    expect(offerHasCuda({ capabilities: null, gpus: [] })).toBe(false);
  });
});
