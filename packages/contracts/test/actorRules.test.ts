import { describe, expect, it } from "vitest";
import { ActorSpec, fieldIssues } from "../src/index";

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
  });

  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ["an openai actor without api", { backend: "openai", trainable: false }, "api", /needs `api`/],
    ["api on a local backend", { api }, "api", /only used by the openai backend/],
    ["a trainable API actor", { backend: "openai", api }, "trainable", /cannot be trained/],
    ["LoRA on an API actor", { backend: "openai", api, trainable: false, training: { lora: {} } }, "training.lora", /no local weights/],
    ["GPUs for an API actor", { backend: "openai", api, trainable: false, placement: { gpus: [0] } }, "placement.gpus", /takes no GPUs/],
    ["vLLM with a tiny preset", { backend: "vllm", model: { source: "tiny" } }, "backend", /vLLM cannot load/],
    ["LoRA on a frozen actor", { trainable: false, training: { lora: {} } }, "training.lora", /frozen actor never trains/],
    ["optimizer offload on a frozen actor", { trainable: false, training: { offload: { optimizer: true } } }, "training.offload.optimizer", /no optimizer state/],
    ["greedy sampling while training", { sampling: { temperature: 0 } }, "sampling.temperature", /zero advantage/],
    ["clipEpsHigh below clipEpsLow", { training: { clipEpsLow: 0.3, clipEpsHigh: 0.2 } }, "training.clipEpsHigh", /at least clipEpsLow \(0\.3\)/],
    ["a GPU listed twice", { placement: { gpus: [0, 0] } }, "placement.gpus", /GPU 0 twice/],
  ];
  it.each(cases)("refuses %s, on the field at fault", (_what, actor, path, message) => {
    const found = issues(actor);
    expect(found.map((i) => i.path)).toContain(path);
    expect(found.find((i) => i.path === path)!.message).toMatch(message);
  });
});
