import type { ModelConfig } from "./modelConfigs";

/**
 * Peak GPU memory of one actor, by part, before a launch. A pure function of numbers so it can be
 * checked by hand (see experiments.memoryEstimate.test.ts). The model, all stated so a user can
 * judge it:
 *  - parameters: P × w bytes (w = 2 for bf16); LoRA adds its adapters.
 *  - gradients: one per trainable parameter, in the weight dtype (T × w).
 *  - optimizer state: mixed-precision AdamW keeps an fp32 master copy and two fp32 moments
 *    (T × 12; ZeRO paper, Rajbhandari et al. 2020); SGD keeps only the master copy (T × 4). With
 *    fp32 weights there is no master copy (AdamW T × 8, SGD 0). Offloaded optimizer state: 0.
 *  - reference model: a frozen copy (P × w) when the KL penalty is on and the whole model trains;
 *    LoRA reuses the base weights with adapters off.
 *  - KV cache while sampling: 2 (K and V) × layers × kvHeads × headDim × w per token, for every
 *    sequence of the rollout batch (prompts per step × group size) at full length.
 *  - activations kept for the backward pass: 34 × h bytes per token per layer in 16-bit
 *    (Korthikanti et al. 2022, with flash attention so no s² term), scaled by w / 2; with gradient
 *    checkpointing only each layer's input is kept, 2 × h (full recomputation, same paper). Only one
 *    micro-batch's activations are alive at a time. The runtime computes log-probs in chunks, so
 *    [tokens × vocab] logits are not counted.
 * An actor placed on n GPUs is sharded ZeRO-3 style: every part divides by n.
 */

export type OptimizerName = "adamw" | "sgd";

export interface ActorMemoryInput {
  params: number;
  config: ModelConfig;
  trainable: boolean;
  optimizer: OptimizerName;
  /** LoRA rank and target module names (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj); absent = full fine-tune. */
  lora?: { rank: number; targetModules: string[] };
  klBeta: number;
  offloadOptimizer: boolean;
  offloadParams: boolean;
  /** Bytes per weight: 2 (bf16/fp16) or 4 (fp32). */
  weightBytes: number;
  /** Sequences generated side by side in a rollout (and trained on in one step). */
  sequences: number;
  /** Tokens per sequence: prompt plus everything generated in the episode. */
  sequenceLength: number;
  /** GPUs the actor is spread over (at least 1). */
  gpus: number;
  /** Recompute activations in the backward pass (training.gradientCheckpointing). */
  gradientCheckpointing?: boolean;
  /** Sequences per forward/backward on each GPU (trainer.microBatchSize); absent: all of its share at once. */
  microBatchSize?: number;
}

export interface MemoryParts {
  parameters: number;
  gradients: number;
  optimizer: number;
  referenceModel: number;
  kvCache: number;
  activations: number;
}

export interface ActorMemory extends MemoryParts {
  trainableParams: number;
  /** Sum of the parts, per GPU. */
  total: number;
}

/** LoRA adds rank × (in + out) parameters per targeted linear layer. */
export function loraParams(config: ModelConfig, rank: number, targetModules: readonly string[]): number {
  const h = config.hiddenSize;
  const kv = config.kvHeads * (h / config.heads);
  const i = config.intermediateSize;
  const shape: Record<string, [number, number]> = {
    q_proj: [h, h],
    k_proj: [h, kv],
    v_proj: [h, kv],
    o_proj: [h, h],
    gate_proj: [h, i],
    up_proj: [h, i],
    down_proj: [i, h],
  };
  let perLayer = 0;
  for (const name of targetModules) {
    const dims = shape[name];
    if (dims) perLayer += rank * (dims[0] + dims[1]);
  }
  return perLayer * config.layers;
}

export function estimateActorMemory(input: ActorMemoryInput): ActorMemory {
  const w = input.weightBytes;
  const c = input.config;
  const n = Math.max(1, input.gpus);
  const adapters = input.lora ? loraParams(c, input.lora.rank, input.lora.targetModules) : 0;
  const trainableParams = input.trainable ? (input.lora ? adapters : input.params) : 0;
  const T = trainableParams;

  const parameters = input.offloadParams ? 0 : (input.params + adapters) * w;
  const gradients = T * w;
  const master = w < 4 ? 4 : 0;
  const moments = input.optimizer === "adamw" ? 8 : 0;
  const optimizer = input.offloadOptimizer ? 0 : T * (master + moments);
  const referenceModel = input.trainable && !input.lora && input.klBeta > 0 ? input.params * w : 0;

  const tokens = input.sequences * input.sequenceLength;
  const headDim = c.hiddenSize / c.heads;
  const kvCache = 2 * c.layers * c.kvHeads * headDim * w * tokens;
  // Sequences whose activations are alive at once, over all n GPUs (each then holds its 1/n below).
  const passSequences = input.microBatchSize ? Math.min(input.sequences, input.microBatchSize * n) : input.sequences;
  const perTokenPerLayer = input.gradientCheckpointing ? 2 : 34;
  const activations = input.trainable ? passSequences * input.sequenceLength * c.layers * c.hiddenSize * perTokenPerLayer * (w / 2) : 0;

  const parts: MemoryParts = {
    parameters: parameters / n,
    gradients: gradients / n,
    optimizer: optimizer / n,
    referenceModel: referenceModel / n,
    kvCache: kvCache / n,
    activations: activations / n,
  };
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  return { ...parts, trainableParams, total };
}

export interface GpuLoad {
  gpu: number;
  /** Per actor on this GPU: its share. */
  actors: { name: string; memory: ActorMemory }[];
  total: number;
  fits: boolean;
  /** Between-phase offload applies here: the total is the largest phase's, not the sum. */
  offloaded: boolean;
}

/**
 * The actors' shares per GPU. An actor with no placement sits on GPU 0 (where the runner puts it).
 * `capacityBytes` is the memory of one GPU. Without between-phase offload every actor's state stays,
 * so the loads add up. With it (`offloadBetweenPhases`: true, or absent and 2+ actors on the GPU, the
 * runtime's default) a GPU holds at any time either one actor's update (everything but its KV cache)
 * or the rollout (every actor's parameters and KV cache): the higher of the two.
 */
export function gpuLoads(
  actors: { name: string; gpus: number[]; memory: ActorMemory }[],
  capacityBytes: number,
  offloadBetweenPhases?: boolean,
): GpuLoad[] {
  const byGpu = new Map<number, GpuLoad>();
  for (const actor of actors) {
    for (const gpu of actor.gpus.length > 0 ? actor.gpus : [0]) {
      const load = byGpu.get(gpu) ?? { gpu, actors: [], total: 0, fits: true, offloaded: false };
      load.actors.push({ name: actor.name, memory: actor.memory });
      byGpu.set(gpu, load);
    }
  }
  for (const load of byGpu.values()) {
    const sum = load.actors.reduce((a, x) => a + x.memory.total, 0);
    load.offloaded = offloadBetweenPhases ?? load.actors.length >= 2;
    if (load.offloaded) {
      const update = Math.max(...load.actors.map((x) => x.memory.total - x.memory.kvCache));
      const rollout = load.actors.reduce((a, x) => a + x.memory.parameters + x.memory.kvCache, 0);
      load.total = Math.max(update, rollout);
    } else {
      load.total = sum;
    }
    load.fits = load.total <= capacityBytes;
  }
  return [...byGpu.values()].sort((a, b) => a.gpu - b.gpu);
}

export const GIB = 1024 ** 3;

