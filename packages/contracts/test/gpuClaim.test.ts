import { describe, expect, it } from "vitest";
import { DEMO_SPEC_INPUT } from "../src/demo";
import { claimOnRunner, defaultGpuCount, gpuClaimOf, gpusOnRunner, storedGpuClaim } from "../src/gpuClaim";
import { RunSpec } from "../src/runSpec";
import { waitingReason, type RunnerOffer } from "../src/runners";

/** Issue #25: what a run claims of a runner's GPUs, in the runner's own numbering. */
const [actor] = DEMO_SPEC_INPUT.actors;
const spec = (actors: Record<string, unknown>[], device = "auto") => RunSpec.parse({ ...DEMO_SPEC_INPUT, actors, trainer: { ...DEMO_SPEC_INPUT.trainer, device } });
const two = spec([actor!, { ...actor!, name: "rival" }]);
const lora = { rank: 4, targetModules: ["q_proj"] };

describe("the GPUs a run claims", () => {
  it("an unplaced auto or cuda spec: one per local model (before #25: none, so it trained on the CPU of a GPU host)", () => {
    expect(defaultGpuCount(two)).toBe(2);
    expect(defaultGpuCount(spec([actor!], "cuda"))).toBe(1);
    expect(gpuClaimOf(two, 2)).toEqual({ kind: "auto", count: 2, cpuFallback: true });
  });

  it("LoRA actors on one base count once; API actors, CPU ranks and trainer.device cpu claim none", () => {
    const shared = spec([
      { ...actor!, training: { ...actor!.training, lora } },
      { ...actor!, name: "rival", training: { ...actor!.training, lora } },
    ]);
    expect(defaultGpuCount(shared)).toBe(1);
    expect(defaultGpuCount(spec([actor!], "cpu"))).toBe(0);
    expect(defaultGpuCount(spec([{ ...actor!, training: { ...actor!.training, backend: "fsdp2" }, placement: { processes: 2 } }]))).toBe(0);
    expect(gpuClaimOf(spec([actor!], "cpu"), 0)).toEqual({ kind: "cpu" });
  });

  it("a placement claims exactly its GPUs, in the runner's numbering", () => {
    const placed = spec([{ ...actor!, placement: { gpus: [1] } }]);
    expect(defaultGpuCount(placed)).toBe(1);
    expect(claimOnRunner(gpuClaimOf(placed, 1), 2)).toEqual({ count: 1, ids: [1] });
    expect(claimOnRunner(gpuClaimOf(placed, 2), 2)).toEqual({ count: 2, ids: [1] }); // asked for more: GPU 1 and another
    expect(claimOnRunner(gpuClaimOf(placed, 1), 1)).toEqual({ refused: expect.stringMatching(/placed on GPU 1 .*this runner has 1 GPU\(s\) \(indices 0-0\)/) as unknown as string });
  });

  it("an auto claim takes at most what the runner has, and none on a CPU-only runner; a cuda one cannot run there", () => {
    expect(claimOnRunner(gpuClaimOf(two, 2), 4)).toEqual({ count: 2, ids: [] });
    expect(claimOnRunner(gpuClaimOf(two, 2), 1)).toEqual({ count: 1, ids: [] });
    expect(claimOnRunner(gpuClaimOf(two, 2), 0)).toEqual({ count: 0, ids: [] });
    expect(claimOnRunner(gpuClaimOf(spec([actor!], "cuda"), 1), 0)).toEqual({ refused: 'trainer.device is "cuda", but this runner has no GPUs' });
  });

  it("a stored spec in another shape claims its row's count, as before", () => {
    expect(storedGpuClaim({ specVersion: 1, fixture: {} }, 2)).toEqual({ kind: "ids", ids: [], count: 2 });
    expect(gpusOnRunner({ specVersion: 1 }, 2, 1)).toBeNull();
    expect(gpusOnRunner(two, 2, 1)).toBe(1);
  });

  it("a queued auto run does not wait for more GPUs than a runner has", () => {
    const now = new Date("2026-11-28T08:00:00Z");
    const gpuRunner: RunnerOffer = {
      id: "gpu-a",
      host: "gpu-a",
      capabilities: {
        runtimeVersion: "0.1.0", python: "3.11", cuda: "13.0",
        gpus: [{ index: 0, name: "H200", totalBytes: 1, freeBytes: 1, bf16: true }],
        cpuCount: 16, memoryBytes: 1, engines: { torch: "2.11" }, trainBackends: ["torch"], rolloutBackends: ["hf"], clusterKinds: ["local"], precisions: ["fp32", "bf16"],
        sandbox: { usable: true, mode: "bwrap", detail: null },
      },
      gpus: [{ index: 0, name: "H200", totalBytes: 1, freeBytes: 1, runId: null }],
      concurrency: 1, heartbeatMs: 10_000, lastHeartbeatAt: new Date(now.getTime() - 1_000), stoppedAt: null, runningRuns: 0,
    };
    expect(waitingReason({ spec: two, gpus: 2 }, [gpuRunner], 0, now)).toBe("next in the queue: a runner takes it at its next poll");
    const held = { ...gpuRunner, gpus: [{ ...gpuRunner.gpus[0]!, runId: "other" }] };
    expect(waitingReason({ spec: two, gpus: 2 }, [held], 0, now)).toBe("needs 2 GPUs; the largest free host has 0");
    // Placed on GPU 1 of a 2-GPU runner whose GPU 1 is held: it waits for that one, though GPU 0 is free.
    const twoGpus = { ...gpuRunner, capabilities: { ...gpuRunner.capabilities!, gpus: [0, 1].map((index) => ({ ...gpuRunner.capabilities!.gpus[0]!, index })) },
      gpus: [{ ...gpuRunner.gpus[0]!, index: 0 }, { ...gpuRunner.gpus[0]!, index: 1, runId: "other" }] };
    const placed = spec([{ ...actor!, placement: { gpus: [1] } }]);
    expect(waitingReason({ spec: placed, gpus: 1 }, [twoGpus], 0, now)).toBe("waits for GPU 1 (actors.*.placement.gpus), held by another run");
    expect(waitingReason({ spec: placed, gpus: 1 }, [{ ...twoGpus, gpus: twoGpus.gpus.map((g) => ({ ...g, runId: null })) }], 0, now)).toBe(
      "next in the queue: a runner takes it at its next poll",
    );
  });
});
