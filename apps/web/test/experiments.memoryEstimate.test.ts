import { describe, expect, it } from "vitest";
import { estimateActorMemory, gpuLoads, loraParams } from "../src/features/experiments/lib/memoryEstimate";
import { HF_MODEL_CONFIGS, knownHfConfig, paramsFromConfig, TINY_PRESET_CONFIGS } from "../src/features/experiments/lib/modelConfigs";

const QWEN_05B = HF_MODEL_CONFIGS["Qwen/Qwen2.5-0.5B"]!;

describe("parameter counts from a config", () => {
  it("Qwen2.5-0.5B: 494,032,768 parameters, worked out by hand", () => {
    // config.json: hidden 896, 24 layers, 14 heads (head dim 64), 2 kv heads (kv dim 128),
    // intermediate 4864, vocab 151936, tied embeddings, biases on q/k/v.
    // embeddings: 151936 * 896                       = 136,134,656
    // per layer:  q 896*896 + 896                    =     803,712
    //             k 896*128 + 128, v the same        = 2 * 114,816
    //             o 896*896                          =     802,816
    //             mlp 3 * 896 * 4864                 =  13,074,432
    //             two RMSNorms 2 * 896               =       1,792
    //             sum                                =  14,912,384
    // 24 layers:  24 * 14,912,384                    = 357,897,216
    // final norm:                                    =         896
    // total:      136,134,656 + 357,897,216 + 896    = 494,032,768 (HF reports 494M)
    expect(paramsFromConfig(QWEN_05B)).toBe(494_032_768);
  });

  it("tiny-char-2l: 138,176 parameters (the runtime logs 138k)", () => {
    // embeddings 100*64 = 6,400; per layer q,k,v 3*(64*64+64) = 12,480, o 4,096, mlp 3*64*256 = 49,152,
    // norms 128 → 65,856; two layers 131,712; final norm 64 → 6,400 + 131,712 + 64 = 138,176.
    expect(paramsFromConfig(TINY_PRESET_CONFIGS["tiny-char-2l"]!)).toBe(138_176);
  });

  it("finds Instruct variants by their base model", () => {
    expect(knownHfConfig("Qwen/Qwen2.5-0.5B-Instruct")).toBe(QWEN_05B);
    expect(knownHfConfig("someone/unknown-model")).toBeUndefined();
  });
});

const base = {
  params: 494_032_768,
  config: QWEN_05B,
  trainable: true,
  optimizer: "adamw" as const,
  klBeta: 0,
  offloadOptimizer: false,
  offloadParams: false,
  weightBytes: 2,
  sequences: 64,
  sequenceLength: 512,
  gpus: 1,
};

describe("estimateActorMemory", () => {
  it("full fine-tune of Qwen2.5-0.5B with AdamW in bf16, 64 sequences of 512 tokens, one GPU", () => {
    const m = estimateActorMemory(base);
    // parameters: 494,032,768 * 2 bytes                       =    988,065,536
    expect(m.parameters).toBe(988_065_536);
    // gradients: same count, bf16                             =    988,065,536
    expect(m.gradients).toBe(988_065_536);
    // optimizer: fp32 master + 2 fp32 moments = 12 bytes each = 5,928,393,216
    expect(m.optimizer).toBe(5_928_393_216);
    expect(m.referenceModel).toBe(0);
    // KV cache: 2 * 24 layers * 2 kv heads * 64 head dim * 2 bytes = 12,288 bytes per token;
    // tokens 64 * 512 = 32,768 → 12,288 * 32,768               =    402,653,184
    expect(m.kvCache).toBe(402_653_184);
    // activations: 32,768 tokens * 24 layers * 896 hidden * 34 bytes = 23,957,864,448
    expect(m.activations).toBe(23_957_864_448);
    expect(m.total).toBe(988_065_536 * 2 + 5_928_393_216 + 402_653_184 + 23_957_864_448);
  });

  it("a KL penalty adds a frozen reference copy; offloading the optimizer removes its state", () => {
    const m = estimateActorMemory({ ...base, klBeta: 0.04, offloadOptimizer: true });
    expect(m.referenceModel).toBe(988_065_536);
    expect(m.optimizer).toBe(0);
  });

  it("a frozen actor holds weights and KV cache only", () => {
    const m = estimateActorMemory({ ...base, trainable: false });
    expect([m.gradients, m.optimizer, m.activations, m.referenceModel]).toEqual([0, 0, 0, 0]);
    expect(m.total).toBe(988_065_536 + 402_653_184);
  });

  it("LoRA trains only the adapters: rank 16 on q,k,v,o of Qwen2.5-0.5B", () => {
    // per layer: q 16*(896+896) = 28,672; k and v 16*(896+128) = 16,384 each; o 28,672 → 90,112; 24 layers → 2,162,688
    expect(loraParams(QWEN_05B, 16, ["q_proj", "k_proj", "v_proj", "o_proj"])).toBe(2_162_688);
    const m = estimateActorMemory({ ...base, klBeta: 0.1, lora: { rank: 16, targetModules: ["q_proj", "k_proj", "v_proj", "o_proj"] } });
    expect(m.trainableParams).toBe(2_162_688);
    expect(m.parameters).toBe((494_032_768 + 2_162_688) * 2);
    expect(m.gradients).toBe(2_162_688 * 2);
    expect(m.optimizer).toBe(2_162_688 * 12);
    // The reference is the base model with adapters off: no second copy.
    expect(m.referenceModel).toBe(0);
  });

  it("SGD keeps only the fp32 master copy; sharding over 4 GPUs divides every part by 4", () => {
    expect(estimateActorMemory({ ...base, optimizer: "sgd" }).optimizer).toBe(494_032_768 * 4);
    const one = estimateActorMemory(base);
    const four = estimateActorMemory({ ...base, gpus: 4 });
    expect(four.total).toBeCloseTo(one.total / 4, 3);
  });
});

describe("gpuLoads", () => {
  it("sums actors per GPU without between-phase offload, puts unplaced actors on GPU 0 and flags a GPU that cannot fit", () => {
    const a = estimateActorMemory(base); // ≈ 32.3 GB
    const b = estimateActorMemory({ ...base, trainable: false }); // ≈ 1.4 GB
    const loads = gpuLoads(
      [
        { name: "a", gpus: [], memory: a },
        { name: "b", gpus: [0, 1], memory: b },
      ],
      30 * 1024 ** 3,
      false,
    );
    expect(loads.map((l) => l.gpu)).toEqual([0, 1]);
    expect(loads[0]!.total).toBe(a.total + b.total);
    // 33,655,760,640 bytes on GPU 0 > 30 GiB = 32,212,254,720
    expect(loads[0]!.fits).toBe(false);
    expect(loads[1]!.fits).toBe(true);
  });

  it("with between-phase offload (on, or by default for 2+ actors on a GPU) a GPU holds the larger of one update and the rollout", () => {
    const a = estimateActorMemory(base);
    const b = estimateActorMemory({ ...base, sequences: 8 });
    const placed = [
      { name: "a", gpus: [0], memory: a },
      { name: "b", gpus: [0], memory: b },
    ];
    const update = Math.max(a.total - a.kvCache, b.total - b.kvCache);
    const rollout = a.parameters + a.kvCache + b.parameters + b.kvCache;
    for (const setting of [true, undefined]) {
      const [load] = gpuLoads(placed, 80 * 1024 ** 3, setting);
      expect(load!.offloaded).toBe(true);
      expect(load!.total).toBe(Math.max(update, rollout));
      expect(load!.total).toBeLessThan(a.total + b.total);
    }
    // One actor alone on a GPU keeps its state there (the runtime's default), unless asked.
    expect(gpuLoads([placed[0]!], 80 * 1024 ** 3)[0]).toMatchObject({ offloaded: false, total: a.total });
    expect(gpuLoads(placed, 80 * 1024 ** 3, false)[0]!.total).toBe(a.total + b.total);
  });
});

describe("precision, micro-batches and gradient checkpointing", () => {
  it("fp32 weights double parameters, gradients and KV cache and need no master copy", () => {
    const bf16 = estimateActorMemory(base);
    const fp32 = estimateActorMemory({ ...base, weightBytes: 4 });
    expect(fp32.parameters).toBe(2 * bf16.parameters);
    expect(fp32.gradients).toBe(2 * bf16.gradients);
    expect(fp32.kvCache).toBe(2 * bf16.kvCache);
    // AdamW: 4 master + 8 moments in bf16, 8 moments alone in fp32.
    expect(fp32.optimizer).toBe((bf16.optimizer / 12) * 8);
  });

  it("keeps one micro-batch's activations, and 2·h instead of 34·h per token per layer with checkpointing", () => {
    const whole = estimateActorMemory(base);
    // base trains 64 sequences on one GPU: micro-batches of 16 keep a quarter alive.
    expect(estimateActorMemory({ ...base, microBatchSize: 16 }).activations).toBe(whole.activations / 4);
    // A micro-batch larger than the batch changes nothing; on 4 GPUs each holds its 16 of the 64.
    expect(estimateActorMemory({ ...base, microBatchSize: 1000 }).activations).toBe(whole.activations);
    expect(estimateActorMemory({ ...base, gpus: 4, microBatchSize: 16 }).activations).toBe(whole.activations / 4);
    expect(estimateActorMemory({ ...base, gpus: 4, microBatchSize: 8 }).activations).toBe(whole.activations / 8);
    expect(estimateActorMemory({ ...base, gradientCheckpointing: true }).activations).toBe((whole.activations / 34) * 2);
    expect(estimateActorMemory({ ...base, gradientCheckpointing: true }).parameters).toBe(whole.parameters);
  });
});

describe("estimateSpecMemory: the spec's numbers feed the estimate", () => {
  it("uses the preset's shape, prompts × group as sequences, and turns from the round spec", async () => {
    const { RunSpec, DEMO_SPEC_INPUT } = await import("@troupe/contracts");
    const { estimateSpecMemory, DEFAULT_ASSUMPTIONS } = await import("../src/features/experiments/lib/specMemory");
    const input = structuredClone(DEMO_SPEC_INPUT) as any;
    input.actors.push({ name: "coach", model: { source: "huggingface", id: "Qwen/Qwen2.5-0.5B-Instruct" }, trainable: false, sampling: { maxNewTokens: 64 } });
    input.actors.push({ name: "mystery", model: { source: "local", path: "/models/x" }, trainable: false });
    input.environments.push({ name: "talk", kind: "collaborative", dataset: "letters", actors: ["student", "coach"], roundSpec: "student -> coach -> (student / coach)*4", rewards: [{ reward: "letter_match" }] });
    const spec = RunSpec.parse(input);
    const out = estimateSpecMemory(spec, { ...DEFAULT_ASSUMPTIONS, promptTokens: 100 });
    const [student, coach, mystery] = out.actors;
    // student: expected turns 1 + 4 * 1/2 = 3; sequence 100 + 3 * 8 = 124 tokens; 8 prompts × 8 = 64 sequences.
    expect(student).toMatchObject({ basis: "preset", params: 138_176, turns: 3, sequenceLength: 124 });
    // fp32 (the default precision): 4 bytes per value.
    expect(student!.memory!.kvCache).toBe(2 * 2 * 4 * 16 * 4 * 64 * 124);
    // coach: the catalog knows the Instruct model by its base; expected turns 3 as well.
    expect(coach).toMatchObject({ basis: "catalog", params: 494_032_768, turns: 3, sequenceLength: 100 + 3 * 64 });
    // An unknown local model has no estimate until its size is typed in.
    expect(mystery).toMatchObject({ basis: "unknown", memory: null });
    const typed = estimateSpecMemory(spec, { ...DEFAULT_ASSUMPTIONS, paramsOverride: { mystery: 1.5e9 } }).actors[2]!;
    expect(typed.basis).toBe("typed");
    expect(typed.memory!.parameters).toBe(1.5e9 * 4); // fp32, the default precision
    expect(out.gpus).toHaveLength(1);
    // Two local models share GPU 0, so between-phase offload is on by default: the larger of one update and the rollout.
    const [s, c] = [student!.memory!, coach!.memory!];
    expect(out.gpus[0]!.total).toBe(Math.max(s.total - s.kvCache, c.total - c.kvCache, s.parameters + s.kvCache + c.parameters + c.kvCache));
    input.trainer = { ...input.trainer, offloadBetweenPhases: false };
    expect(estimateSpecMemory(RunSpec.parse(input), { ...DEFAULT_ASSUMPTIONS, promptTokens: 100 }).gpus[0]!.total).toBe(s.total + c.total);
    // bf16 halves the student's KV cache.
    input.actors[0].training = { ...input.actors[0].training, precision: "bf16" };
    expect(estimateSpecMemory(RunSpec.parse(input), { ...DEFAULT_ASSUMPTIONS, promptTokens: 100 }).actors[0]!.memory!.kvCache).toBe(s.kvCache / 2);
  });
});
