import { describe, expect, it } from "vitest";
import { DEMO_SPEC_INPUT } from "../src/demo";
import { RunSpec } from "../src/runSpec";
import { runnerIssues, runnerState, specRequirements, unavailableChoices, waitingReason, type RunnerCapabilities, type RunnerOffer } from "../src/runners";

const GIB = 1024 ** 3;
const now = new Date("2026-11-25T12:00:00Z");

function caps(over: { cuda?: string | null; gpus?: number; engines?: Record<string, string | null>; clusterKinds?: string[] } = {}): RunnerCapabilities {
  const gpus = Array.from({ length: over.gpus ?? 0 }, (_, index) => ({ index, name: "H100", totalBytes: 80 * GIB, freeBytes: 80 * GIB, bf16: true }));
  return {
    runtimeVersion: "0.1.0",
    python: "3.11",
    cuda: over.cuda ?? null,
    gpus,
    cpuCount: 16,
    memoryBytes: 128 * GIB,
    engines: { torch: "2.8.0", vllm: null, deepspeed: null, peft: "0.17", ray: null, ...over.engines },
    trainBackends: ["torch", "fsdp2"],
    rolloutBackends: ["hf", "openai"],
    clusterKinds: over.clusterKinds ?? ["local"],
    precisions: ["fp32", "bf16"],
    sandbox: { usable: true, mode: "bwrap", detail: null },
  };
}

function runner(id: string, c: RunnerCapabilities | null, over: Partial<RunnerOffer> = {}): RunnerOffer {
  return {
    id,
    host: id,
    capabilities: c,
    gpus: (c?.gpus ?? []).map((g) => ({ index: g.index, name: g.name, totalBytes: g.totalBytes, freeBytes: g.freeBytes, runId: null })),
    concurrency: 1,
    heartbeatMs: 10_000,
    lastHeartbeatAt: new Date(now.getTime() - 1_000),
    stoppedAt: null,
    runningRuns: 0,
    ...over,
  };
}

const hf = { source: "huggingface", id: "Qwen/Qwen2.5-0.5B-Instruct" };
const vllmSpec = (gpus: number[] = [0]) =>
  RunSpec.parse({ ...DEMO_SPEC_INPUT, actors: [{ ...DEMO_SPEC_INPUT.actors[0], model: hf, backend: "vllm", placement: { gpus } }], trainer: { ...DEMO_SPEC_INPUT.trainer, device: "auto" } });

describe("runner requirements", () => {
  it("user code needs a runner whose sandbox works: Python rewards, code and tools environments are refused where none does", () => {
    const spec = RunSpec.parse({
      ...DEMO_SPEC_INPUT,
      rewards: [{ name: "mine", source: { kind: "python", code: "def reward(prompt, completion, **row):\n    return 1.0\n" } }],
      environments: [
        { ...DEMO_SPEC_INPUT.environments[0], rewards: [{ reward: "mine" }] },
        { ...DEMO_SPEC_INPUT.environments[0], name: "tools", kind: "tools", rewards: [{ reward: "mine" }] },
      ],
    });
    const noBwrap = runner("cpu-a", { ...caps(), sandbox: { usable: false, mode: "bwrap", detail: "bubblewrap is not installed" } });
    expect(runnerIssues(spec, [noBwrap], now).map((i) => i.path)).toEqual(["rewards.0.source.kind", "environments.1.kind"]);
    expect(runnerIssues(spec, [noBwrap, runner("cpu-b", caps())], now)).toEqual([]);
    const unavailable = unavailableChoices([noBwrap], now);
    expect(unavailable.pythonReward).toMatch(/^no live runner has a sandbox for user code/);
    expect(unavailable.codeEnvironment).not.toBeNull();
    expect(unavailableChoices([runner("cpu-b", caps())], now).toolsEnvironment).toBeNull();
  });

  it("names every field a spec asks a runner for", () => {
    const found = specRequirements(vllmSpec([0, 1]));
    expect(found.map((f) => [f.requirement.id, f.path, f.gpuCount])).toEqual([
      ["vllm", "actors.0.backend", undefined],
      ["gpus", "actors.0.placement.gpus", 2],
    ]);
    expect(specRequirements(RunSpec.parse(DEMO_SPEC_INPUT))).toEqual([]);
  });

  it("refuses nothing while no live runner has reported (a fresh start), and everything it cannot meet once one has", () => {
    expect(runnerIssues(vllmSpec(), [], now)).toEqual([]);
    expect(runnerIssues(vllmSpec(), [runner("probing", null)], now)).toEqual([]);
    const gpuA = runner("gpu-a", caps({ cuda: "12.8", gpus: 1 }));
    const issues = runnerIssues(vllmSpec(), [gpuA, runner("cpu-b", caps())], now);
    expect(issues).toEqual([
      {
        path: "actors.0.backend",
        message: "no runner has vLLM and a CUDA GPU; runners: gpu-a (torch 2.8.0, CUDA 12.8, 1 GPU H100 80 GiB), cpu-b (torch 2.8.0, no CUDA, no GPUs)",
      },
    ]);
    const gpuC = runner("gpu-c", caps({ cuda: "12.8", gpus: 2, engines: { vllm: "0.11.0" } }));
    expect(runnerIssues(vllmSpec([0, 1]), [gpuA, gpuC], now)).toEqual([]);
    // Each demand met by some runner, but none meets them all: refused at the first demand's field.
    const split = runnerIssues(vllmSpec([0, 1]), [runner("gpu-d", caps({ cuda: "12.8", gpus: 1, engines: { vllm: "0.11.0" } })), runner("gpu-e", caps({ cuda: "12.8", gpus: 2 }))], now);
    expect(split.map((i) => i.path)).toEqual(["actors.0.backend"]);
    expect(split[0]!.message).toMatch(/^no one runner has all of vLLM and a CUDA GPU, 2 CUDA GPUs; runners: gpu-d/);
  });

  it("asks for grpcio and protobuf where an environment's url is grpc://, and for nothing over http", () => {
    const remote = (url: string) =>
      RunSpec.parse({ ...DEMO_SPEC_INPUT, environments: [{ ...DEMO_SPEC_INPUT.environments[0], kind: "remote", url, rewards: [] }] });
    expect(specRequirements(remote("http://envhost:8100"))).toEqual([]);
    const grpcSpec = remote("grpc://envhost:8101");
    expect(specRequirements(grpcSpec).map((f) => [f.requirement.id, f.path])).toEqual([["grpc", "environments.0.url"]]);
    // The trainer calls the url itself, so its host must be on the runners' host list (issue 30) before engines count.
    const listing = (c: RunnerCapabilities): RunnerCapabilities => ({ ...c, hostPolicy: { actorKeyEnvs: [], apiHosts: ["envhost"], dataRoots: [] } });
    expect(runnerIssues(grpcSpec, [runner("cpu-z", caps({ engines: { grpcio: "1.84.0", protobuf: "7.36.2" } }))], now)[0]!.message).toMatch(/host envhost .*TROUPE_API_HOSTS/);
    const bare = runner("cpu-a", listing(caps()));
    expect(runnerIssues(grpcSpec, [bare], now)).toEqual([
      { path: "environments.0.url", message: "no runner has grpcio and protobuf (remote environments over gRPC); runners: cpu-a (torch 2.8.0, no CUDA, no GPUs)" },
    ]);
    const withGrpc = runner("cpu-b", listing(caps({ engines: { grpcio: "1.84.0", protobuf: "7.36.2" } })));
    expect(runnerIssues(grpcSpec, [bare, withGrpc], now)).toEqual([]);
    expect(runnerIssues(grpcSpec, [runner("cpu-c", listing(caps({ engines: { grpcio: "1.84.0" } })))], now).map((i) => i.path)).toEqual(["environments.0.url"]);
  });

  it("offers a runner only while it heartbeats", () => {
    const gpuC = runner("gpu-c", caps({ cuda: "12.8", gpus: 1, engines: { vllm: "0.11.0" } }));
    expect(runnerState(gpuC, now)).toBe("live");
    const silent = { ...gpuC, lastHeartbeatAt: new Date(now.getTime() - 31_000) };
    expect(runnerState(silent, now)).toBe("gone");
    expect(runnerState({ ...gpuC, stoppedAt: now }, now)).toBe("stopped");
    const cpu = runner("cpu-b", caps());
    expect(runnerIssues(vllmSpec(), [gpuC, cpu], now)).toEqual([]);
    expect(runnerIssues(vllmSpec(), [silent, cpu], now).map((i) => i.path)).toEqual(["actors.0.backend", "actors.0.placement.gpus"]);
    expect(unavailableChoices([gpuC, cpu], now).vllm).toBeNull();
    expect(unavailableChoices([silent, cpu], now).vllm).toMatch(/^no live runner has vLLM and a CUDA GPU; runners: cpu-b/);
    expect(unavailableChoices([], now).vllm).toBeNull();
  });

  it("says why a queued run waits", () => {
    const spec = vllmSpec([0, 1]);
    expect(waitingReason({ spec, gpus: 2 }, [], 0, now)).toMatch(/^no live runner/);
    const gpuC = runner("gpu-c", caps({ cuda: "12.8", gpus: 2, engines: { vllm: "0.11.0" } }));
    const held = { ...gpuC, gpus: gpuC.gpus.map((g, i) => ({ ...g, runId: i === 0 ? "run-1" : null })), runningRuns: 1, concurrency: 2 };
    expect(waitingReason({ spec, gpus: 2 }, [held, runner("gpu-a", caps({ cuda: "12.8", gpus: 1 }))], 0, now)).toBe(
      "needs 2 GPUs with vLLM; the largest free host has 1",
    );
    expect(waitingReason({ spec, gpus: 2 }, [gpuC], 3, now)).toBe("3 queued runs ahead of it");
    expect(waitingReason({ spec, gpus: 2 }, [{ ...gpuC, runningRuns: 1 }], 0, now)).toBe("every runner that can run it is busy (gpu-c runs 1 of 1)");
    expect(waitingReason({ spec, gpus: 2 }, [runner("cpu-b", caps())], 0, now)).toMatch(/^no live runner can run it: actors\.0\.backend: no runner has vLLM/);
  });
});
