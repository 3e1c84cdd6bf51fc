import { DEMO_SPEC_INPUT, RunSpec, RunnerCapabilities, type RunnerOffer } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { launchIssuesAgainst } from "../src/features/runners/lib/launchIssues";
import { claimedGpusIssue, gpusFor } from "../src/features/runs/lib/gpusFor";
import { validateDraft } from "../src/features/experiments/lib/specIssues";

/**
 * The composer shows a spec that the launch would refuse as invalid before the click: GPUs placed on a
 * GPU-less host said "✓ The spec is valid" and were refused only at launch. Both run launchIssuesAgainst.
 */

const GIB = 1024 ** 3;
function cpuRunner(): RunnerOffer {
  const capabilities = RunnerCapabilities.parse({
    runtimeVersion: "0.1.0", hostname: "cpu-host", python: "3.11.7", cuda: null, gpus: [], cpuCount: 2, memoryBytes: 8 * GIB,
    engines: { torch: "2.13.0", transformers: "5.18.0", vllm: null, deepspeed: null, "liger-kernel": null, "flash-attn": null, peft: "0.17.1", ray: null, triton: "3.8.0" },
    trainBackends: ["torch", "fsdp2"], rolloutBackends: ["hf", "openai"], clusterKinds: ["local"], precisions: ["fp32"],
    sandbox: { usable: true, mode: "bwrap", detail: null },
  });
  return { id: "cpu-host", host: "cpu-host", capabilities, gpus: [], concurrency: 1, heartbeatMs: 1000, lastHeartbeatAt: new Date(), stoppedAt: null, runningRuns: 0 };
}

const onGpu0 = () => ({
  ...DEMO_SPEC_INPUT,
  trainer: { ...DEMO_SPEC_INPUT.trainer, device: "cuda" },
  actors: DEMO_SPEC_INPUT.actors.map((a) => ({ ...a, placement: { gpus: [0] } })),
});

describe("the launch's runner check, run in the composer", () => {
  it("a spec placed on GPU 0 passes the schema check but not the runner check on a CPU host", () => {
    const { spec, issues } = validateDraft(onGpu0());
    expect(issues).toEqual([]); // what the composer said before: "✓ The spec is valid"
    const refused = launchIssuesAgainst(spec!, [cpuRunner()], gpusFor(spec!));
    const placed = refused.find((i) => i.path === "actors.0.placement.gpus");
    expect(placed?.message, JSON.stringify(refused)).toMatch(/no runner has 1 CUDA GPU; runners: cpu-host \(.*no GPUs\)/);
  });

  it("the CPU demo passes on the CPU host, and nothing is refused while no runner is live", () => {
    const demo = RunSpec.parse(DEMO_SPEC_INPUT);
    expect(launchIssuesAgainst(demo, [cpuRunner()], gpusFor(demo))).toEqual([]);
    const { spec } = validateDraft(onGpu0());
    expect(launchIssuesAgainst(spec!, [], 1)).toEqual([]);
  });

  it("the launch form's GPU count: none on a CPU run, not fewer than the placement", () => {
    const demo = RunSpec.parse(DEMO_SPEC_INPUT);
    expect(claimedGpusIssue(demo, 2)?.message).toMatch(/trains on the CPU/);
    expect(claimedGpusIssue(demo, undefined)).toBeNull();
    const { spec } = validateDraft(onGpu0());
    expect(claimedGpusIssue(spec!, 0)?.message).toMatch(/ask for at least 1/);
  });

  it("offloading on a CPU host is refused before launch (it used to be saved, launched and do nothing)", () => {
    const { spec, issues } = validateDraft({
      ...DEMO_SPEC_INPUT,
      trainer: { ...DEMO_SPEC_INPUT.trainer, device: "auto" },
      actors: DEMO_SPEC_INPUT.actors.map((a) => ({ ...a, training: { ...(a as { training?: object }).training, offload: { params: true, optimizer: true } } })),
    });
    expect(issues).toEqual([]);
    const refused = launchIssuesAgainst(spec!, [cpuRunner()], gpusFor(spec!));
    expect(refused.map((i) => i.path).sort()).toEqual(["actors.0.training.offload.optimizer", "actors.0.training.offload.params"]);
    expect(refused[0]!.message).toMatch(/offloading moves .* out of GPU memory, but no live runner has a CUDA GPU, so it trains on the CPU; runners: cpu-host/);
    // On trainer.device cpu it is refused whatever the runners; on a GPU runner with device auto it is fine.
    const onCpu = validateDraft({ ...DEMO_SPEC_INPUT, actors: DEMO_SPEC_INPUT.actors.map((a) => ({ ...a, training: { ...(a as { training?: object }).training, offload: { params: false, optimizer: true } } })) });
    expect(onCpu.spec!.trainer.device).toBe("cpu");
    expect(launchIssuesAgainst(onCpu.spec!, [], 0).map((i) => i.path)).toEqual(["actors.0.training.offload.optimizer"]);
    const gpuHost = { ...cpuRunner(), id: "gpu-host", capabilities: { ...cpuRunner().capabilities!, cuda: "12.8", gpus: [{ index: 0, name: "H100", totalBytes: 80 * GIB, freeBytes: 80 * GIB, bf16: true }] }, gpus: [{ index: 0, name: "H100", totalBytes: 80 * GIB, freeBytes: 80 * GIB, runId: null }] } as RunnerOffer;
    expect(launchIssuesAgainst(spec!, [gpuHost], 0)).toEqual([]);
  });
});
