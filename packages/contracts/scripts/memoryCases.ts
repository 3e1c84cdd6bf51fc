/**
 * Runs whose memory the runtime measures and the contracts' estimate predicts
 * (gpu-runtime/tests/test_memory_estimate.py). The runtime reads them, with their estimates, from
 * gpu-runtime/tests/fixtures/memory_estimates.json, written by `export-memory-estimates.ts` (so the
 * test needs no Node on a GPU host); a vitest test fails when that file is stale.
 *
 * Each case is one actor on a Qwen2-shaped model built from `config` (random weights, the character
 * tokenizer's vocabulary of 100), saved to a folder the test names in place of MODEL_FOLDER.
 */
import { DEFAULT_ASSUMPTIONS, estimateRunMemory, RunSpec, type ModelConfig, type PhaseLoad } from "../src";

export const MODEL_FOLDER = "MODEL_FOLDER";
/** The echo_letter prompts ("say k:") are 6 characters: 6 tokens with the character tokenizer. */
export const PROMPT_TOKENS = 6;

const shape = (hiddenSize: number, layers: number, heads: number, intermediateSize: number): ModelConfig => ({
  hiddenSize,
  layers,
  heads,
  kvHeads: heads,
  intermediateSize,
  vocabSize: 100,
  tiedEmbeddings: true,
  qkvBias: true,
});

export interface MemoryCase {
  name: string;
  /** Where it runs: "cpu" in the CPU test, "cuda" in scripts/gpu-check.sh. */
  device: "cpu" | "cuda";
  /** The run whose measured peaks are subtracted as the process's own memory (same device). */
  baseline: string | null;
  /** Model shape per actor (built by the test). */
  models: Record<string, ModelConfig>;
  spec: Record<string, unknown>;
}

function spec(device: "cpu" | "cuda", actors: Record<string, unknown>[]): Record<string, unknown> {
  return {
    specVersion: 1,
    name: "memory estimate check",
    seed: 7,
    actors,
    datasets: [{ name: "letters", source: { kind: "builtin", name: "echo_letter", size: 64 } }],
    rewards: [{ name: "letter_match", source: { kind: "builtin", name: "letter_match" } }],
    environments: [
      { name: "echo", kind: "single_turn", dataset: "letters", actors: ["student"], prompt: { field: "prompt" }, rewards: [{ reward: "letter_match" }] },
    ],
    algorithm: { name: "grpo", groupSize: 8 },
    // Step 2 is the steady state (gradients and optimizer state exist from step 1): the test compares it.
    trainer: { steps: 2, promptsPerStep: 2, episodesPerStep: 1, device, cpuThreads: 1, checkpointEvery: 0, evalEvery: 0 },
  };
}

const student = (training: Record<string, unknown> = {}) => ({
  name: "student",
  model: { source: "local", path: MODEL_FOLDER },
  trainable: true,
  training: { learningRate: 0.001, ...training },
  sampling: { temperature: 1, maxNewTokens: 64 },
});

const TINY = shape(64, 2, 4, 256);
const M13 = shape(512, 4, 8, 1536);
const M54 = shape(1024, 4, 8, 3072);

export const MEMORY_CASES: MemoryCase[] = [
  // CPU: host RSS peaks (VmHWM per phase). The tiny model's run measures the process itself.
  { name: "cpu-tiny", device: "cpu", baseline: null, models: { student: TINY }, spec: spec("cpu", [student()]) },
  { name: "cpu-13m", device: "cpu", baseline: "cpu-tiny", models: { student: M13 }, spec: spec("cpu", [student()]) },
  { name: "cpu-54m-kl", device: "cpu", baseline: "cpu-tiny", models: { student: M54 }, spec: spec("cpu", [student({ klBeta: 0.05 })]) },
  // CUDA: torch.cuda.max_memory_allocated per phase.
  { name: "cuda-tiny", device: "cuda", baseline: null, models: { student: TINY }, spec: spec("cuda", [student()]) },
  { name: "cuda-54m", device: "cuda", baseline: "cuda-tiny", models: { student: M54 }, spec: spec("cuda", [student()]) },
  { name: "cuda-54m-bf16-kl", device: "cuda", baseline: "cuda-tiny", models: { student: M54 }, spec: spec("cuda", [student({ precision: "bf16", klBeta: 0.05 })]) },
  {
    // A frozen bf16 actor in no environment beside the trainee: two models on one GPU, so between-phase
    // offload is on by default and the frozen one waits on the host while the student samples and trains.
    name: "cuda-54m-with-frozen",
    device: "cuda",
    baseline: "cuda-tiny",
    models: { student: M54, judge: M13 },
    spec: spec("cuda", [
      student(),
      { name: "judge", model: { source: "local", path: MODEL_FOLDER }, trainable: false, training: { precision: "bf16" }, sampling: { maxNewTokens: 8 } },
    ]),
  },
];

export interface CaseEstimate {
  name: string;
  device: "cpu" | "cuda";
  baseline: string | null;
  models: Record<string, ModelConfig>;
  promptTokens: number;
  spec: Record<string, unknown>;
  /** Bytes per (phase, actor) on the measured device (cpu, or cuda:0). */
  phases: { phase: PhaseLoad["phase"]; actor: string; bytes: number }[];
}

export function caseEstimates(): CaseEstimate[] {
  return MEMORY_CASES.map((c) => {
    const parsed = RunSpec.parse(c.spec);
    const estimate = estimateRunMemory(parsed, { ...DEFAULT_ASSUMPTIONS, promptTokens: PROMPT_TOKENS, configOverride: c.models }, () => 1, c.device === "cpu" ? "cpu" : "gpu");
    const device = c.device === "cpu" ? "cpu" : "cuda:0";
    return {
      name: c.name,
      device: c.device,
      baseline: c.baseline,
      models: c.models,
      promptTokens: PROMPT_TOKENS,
      spec: c.spec,
      phases: estimate.phases.filter((p) => p.device === device).map((p) => ({ phase: p.phase, actor: p.actor, bytes: Math.round(p.total) })),
    };
  });
}
