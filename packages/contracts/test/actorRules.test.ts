import { describe, expect, it } from "vitest";
import { ActorSpec, RunSpec, fieldIssues } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/** Each rule of actorRules.ts, through ActorSpec (what every client validates with). */
const base = { name: "alice", model: { source: "huggingface", id: "Qwen/Qwen2.5-0.5B-Instruct" } } as const;
const api = { baseUrl: "https://api.example.com/v1", model: "gpt-x" };

function issues(actor: Record<string, unknown>) {
  const parsed = ActorSpec.safeParse({ ...base, ...actor });
  return parsed.success ? [] : fieldIssues(parsed.error);
}

describe("actor rules", () => {
  it("accepts sensible actors, including a frozen actor that keeps a learning rate", () => {
    expect(issues({})).toEqual([]);
    expect(issues({ trainable: false, training: { learningRate: 1e-5 } })).toEqual([]);
    expect(issues({ backend: "openai", api, trainable: false })).toEqual([]);
    expect(issues({ training: { lora: { rank: 8 } }, placement: { gpus: [0] } })).toEqual([]);
    expect(issues({ evalSampling: { temperature: 0 } })).toEqual([]);
    expect(issues({ backend: "vllm", vllm: { tensorParallel: 2, sleepLevel: 2 }, placement: { gpus: [0, 1] } })).toEqual([]);
  });

  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ["an openai actor without api", { backend: "openai", trainable: false }, "api", /needs `api`/],
    ["api on a local backend", { api }, "api", /only used by the openai backend/],
    ["a trainable API actor", { backend: "openai", api }, "trainable", /cannot be trained/],
    ["LoRA on an API actor", { backend: "openai", api, trainable: false, training: { lora: {} } }, "training.lora", /no local weights/],
    ["GPUs for an API actor", { backend: "openai", api, trainable: false, placement: { gpus: [0] } }, "placement.gpus", /takes no GPUs/],
    ["vLLM with a tiny preset", { backend: "vllm", model: { source: "tiny" } }, "backend", /vLLM cannot load/],
    ["vllm settings on an hf actor", { vllm: { sleepLevel: 2 } }, "vllm", /only used by the vllm backend/],
    ["vLLM tensor parallel unlike the GPUs", { backend: "vllm", vllm: { tensorParallel: 2 }, placement: { gpus: [0] } }, "vllm.tensorParallel", /placed on 1/],
    ["level-2 sleep on a frozen vLLM actor", { backend: "vllm", trainable: false, vllm: { sleepLevel: 2 } }, "vllm.sleepLevel", /no trainer to push them back/],
    ["a vLLM memory share above 1", { backend: "vllm", vllm: { gpuMemoryUtilization: 1.5 } }, "vllm.gpuMemoryUtilization", /1/],
    ["LoRA on a frozen actor", { trainable: false, training: { lora: {} } }, "training.lora", /frozen actor never trains/],
    ["optimizer offload on a frozen actor", { trainable: false, training: { offload: { optimizer: true } } }, "training.offload.optimizer", /no optimizer state/],
    ["greedy sampling while training", { sampling: { temperature: 0 } }, "sampling.temperature", /zero advantage/],
    ["clipEpsHigh below clipEpsLow", { training: { clipEpsLow: 0.3, clipEpsHigh: 0.2 } }, "training.clipEpsHigh", /at least clipEpsLow \(0\.3\)/],
    ["a GPU listed twice", { placement: { gpus: [0, 0] } }, "placement.gpus", /GPU 0 twice/],
    ["a train backend on an API actor", { backend: "openai", api, trainable: false, training: { backend: "fsdp2" } }, "training.backend", /not trained here/],
    ["GPUs and processes together", { placement: { gpus: [0], processes: 2 } }, "placement.processes", /either GPUs or CPU processes/],
    ["fsdp2 on a frozen actor", { trainable: false, training: { backend: "fsdp2" } }, "training.backend", /never updated/],
  ];
  it.each(cases)("refuses %s, on the field at fault", (_what, actor, path, message) => {
    const found = issues(actor);
    expect(found.map((i) => i.path)).toContain(path);
    expect(found.find((i) => i.path === path)!.message).toMatch(message);
  });
});

/** Run-wide rules (runIssues), through RunSpec. */
describe("run rules", () => {
  const tiny = { model: { source: "tiny" } } as const;
  function runIssues(actors: Record<string, unknown>[], trainer: Record<string, unknown> = {}) {
    const spec = {
      ...DEMO_SPEC_INPUT,
      actors: actors.map((a, i) => ({ name: `a${i}`, ...tiny, ...a })),
      environments: [{ ...DEMO_SPEC_INPUT.environments[0], actors: ["a0"] }],
      trainer: { ...DEMO_SPEC_INPUT.trainer, ...trainer },
    };
    const parsed = RunSpec.safeParse(spec);
    return parsed.success ? [] : fieldIssues(parsed.error);
  }

  it("accepts actors that share the run's ranks, or follow them", () => {
    expect(runIssues([{ placement: { processes: 2 } }, { placement: { processes: 2 } }, {}])).toEqual([]);
    expect(runIssues([{ training: { backend: "deepspeed", offload: { optimizer: true } } }])).toEqual([]);
  });

  it("refuses actors asking for different rank counts, on the second actor's placement", () => {
    const found = runIssues([{ placement: { processes: 2 } }, { placement: { processes: 3 } }]);
    expect(found.map((i) => i.path)).toEqual(["actors.1.placement.processes"]);
    expect(found[0]!.message).toMatch(/asks for 3 ranks but "a0" asks for 2/);
  });

  it("refuses mixing GPU ranks and CPU processes", () => {
    const found = runIssues([{ placement: { gpus: [0, 1] } }, { placement: { processes: 2 } }]);
    expect(found.map((i) => i.path)).toContain("actors.1.placement.processes");
  });

  it("refuses DeepSpeed's CPU offload where actors share a GPU and between-phase offload is on by default", () => {
    const ds = { training: { backend: "deepspeed", offload: { optimizer: true } }, placement: { gpus: [0] } };
    const found = runIssues([ds, { placement: { gpus: [0] } }]);
    expect(found.map((i) => i.path)).toEqual(["actors.0.training.offload.optimizer"]);
    expect(runIssues([ds, { placement: { gpus: [0] } }], { offloadBetweenPhases: false })).toEqual([]);
    expect(runIssues([ds, { placement: { gpus: [1] } }])).toEqual([]);
  });

  it("refuses DeepSpeed's CPU optimizer together with between-phase offload (DeepSpeed issue 6596)", () => {
    const found = runIssues([{ training: { backend: "deepspeed", offload: { optimizer: true } } }], { offloadBetweenPhases: true });
    expect(found.map((i) => i.path)).toEqual(["trainer.offloadBetweenPhases"]);
    expect(found[0]!.message).toMatch(/6596/);
  });
});
