import type { ModelConfig } from "./modelConfigs";

/**
 * What one actor holds in memory, by part, on one device (one rank's share): pure arithmetic on the
 * model's shape and the actor's settings, following what the runtime does (gpu-runtime/src/troupe):
 *
 *  - weights: a trainable actor is loaded in fp32 (models.py) whatever its precision: bf16 is autocast
 *    (torch backend) or FSDP2's MixedPrecisionPolicy (bf16 copies of one layer at a time), so its
 *    parameters are 4 bytes each. DeepSpeed with bf16 keeps bf16 parameters (2 bytes) and an fp32
 *    master copy in its optimizer state. A frozen actor and a KL reference are cast to bf16 when the
 *    actor's precision says so (actors.py), else fp32.
 *  - gradients: one per trainable parameter, in the parameters' dtype (fp32; bf16 under DeepSpeed bf16).
 *    They stay allocated after the step until the next update's `zero_grad(set_to_none=True)`.
 *  - optimizer: AdamW keeps two fp32 moments (8 bytes per trained parameter); SGD (no momentum) none.
 *    DeepSpeed bf16 adds the fp32 master copy (4).
 *  - LoRA: the base is frozen, only the adapters train; the KL reference is the same model with its
 *    adapters off (no copy). LoRA actors on one base share it (shared_lora.py): the base is counted
 *    once, with the first of them.
 *  - sharding: fsdp2 and deepspeed split parameters, gradients, optimizer state (and fsdp2 the KL
 *    reference) over the run's ranks; torch keeps a full replica on every rank.
 *  - offload.params / offload.optimizer under fsdp2 or deepspeed: that state lives on the host for
 *    the whole run (CPUOffloadPolicy, ZeRO offload). Under torch the residency manager moves it
 *    between phases (phaseMemory.ts).
 *  - rollout: the KV cache of one generate call (2 × layers × kvHeads × headDim per token, in the
 *    sampling dtype: fp32 for a trainable torch actor, which samples without autocast), the last
 *    position's logits (3 [sequences × vocab] fp32 tensors: scores, their log-softmax, the
 *    probabilities), and under fsdp2 the full parameters it gathers for the whole rollout.
 *  - update: activations kept for backward, counted per token and layer from a Llama/Qwen2 decoder:
 *    two RMSNorms (input and normalised output, 2h each), attention (RoPE'd q and k, v, the attention
 *    output before and after its reshape: 3h + 2kv), SwiGLU (gate, SiLU(gate), up, their product: 4i)
 *    = 7h + 2kv + 4i values, plus 3h per token for the final norm and the log-prob kernel's input. The
 *    attention kernel keeps no [s × s] scores (SDPA flash / memory-efficient path), and log-probs are
 *    computed in chunks so no [tokens × vocab] logits. Values are 4 bytes in fp32; under bf16 the
 *    matmul outputs are 2 bytes while the residual stream and the norms stay fp32 and each linear
 *    keeps its own bf16 cast of its input: 2(7h + 2kv + 4i) + 8h + 10h. With gradient checkpointing
 *    only each layer's input (h, fp32) is kept, plus one layer's activations recomputed in backward.
 *    One micro-batch of this rank's rows is alive at a time; backward needs one more layer's worth as
 *    working space. Gradients are freed at the update's start (zero_grad), so with one micro-batch the
 *    peak is the larger of "all activations" and "all gradients"; with several, the gradients of the
 *    first micro-batches are there while the next one's activations build up (both count). The torch
 *    backend's bf16 autocast also caches a bf16 copy of every trainable weight during the forward (2
 *    bytes per trained parameter).
 *  - reference: the KL reference's log-probs under no_grad: one layer's activations at a time.
 *
 * Not modelled: the process itself (CUDA context, kernels, the Python heap: on CPU a measured
 * baseline, see gpu-runtime/tests/test_memory_estimate.py), allocator fragmentation, vLLM's own pool.
 */

export type OptimizerName = "adamw" | "sgd";
export type PrecisionName = "fp32" | "bf16";
export type BackendName = "torch" | "fsdp2" | "deepspeed";

export interface ActorMemoryInput {
  params: number;
  config: ModelConfig;
  trainable: boolean;
  optimizer: OptimizerName;
  /** LoRA rank and target module names (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj); absent = full fine-tune. */
  lora?: { rank: number; targetModules: string[] };
  /** LoRA on a base an earlier actor of the run already holds: only this actor's adapters are its own. */
  sharesBase?: boolean;
  klBeta: number;
  precision: PrecisionName;
  backend: BackendName;
  offloadOptimizer: boolean;
  offloadParams: boolean;
  /** Sequences generated in one rollout (and trained on in one step), over all ranks. */
  sequences: number;
  /** Tokens per sequence: prompt plus everything generated in the episode. */
  sequenceLength: number;
  /** Ranks of the run (the runtime's max of placement.gpus / placement.processes over actors). */
  ranks: number;
  /** Recompute activations in the backward pass (training.gradientCheckpointing). */
  gradientCheckpointing?: boolean;
  /** Sequences per forward/backward on each rank (trainer.microBatchSize); absent: all of its rows at once. */
  microBatchSize?: number;
}

/** Bytes that stay allocated between phases (moved, not freed, by the residency manager). */
export interface ResidentParts {
  parameters: number;
  gradients: number;
  optimizer: number;
  referenceModel: number;
}

/** Bytes that exist only while a phase runs. */
export interface TransientParts {
  kvCache: number;
  samplingLogits: number;
  /** fsdp2: the full parameters gathered once for the whole rollout. */
  gatheredParameters: number;
  /** One micro-batch's activations kept for backward, plus one layer's working space. */
  activations: number;
  /** torch + bf16: autocast's bf16 copies of the trainable weights during the forward. */
  autocastCache: number;
  /** The KL reference's forward (no_grad). */
  referenceForward: number;
}

export interface ActorMemory extends ResidentParts, TransientParts {
  trainableParams: number;
  /** Parts kept on the host for the whole run (fsdp2 / deepspeed offload): never on the device. */
  hostOnly: { parameters: boolean; optimizer: boolean };
  /** Extra bytes while this actor samples, on top of what is resident. */
  rollout: number;
  /** Extra bytes while this actor updates, on top of what is resident without its gradients. */
  update: number;
  /** Extra bytes while its KL reference scores the batch. */
  reference: number;
  /** The actor alone on its device, at its worst phase, nothing offloaded between phases. */
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

/** Values kept for backward per token in one decoder layer (see the header). */
export function activationBytesPerTokenLayer(c: ModelConfig, bf16: boolean): number {
  const h = c.hiddenSize;
  const kv = c.kvHeads * (h / c.heads);
  const i = c.intermediateSize;
  const values = 7 * h + 2 * kv + 4 * i;
  return bf16 ? 2 * values + 8 * h + 10 * h : 4 * values;
}

export function estimateActorMemory(input: ActorMemoryInput): ActorMemory {
  const c = input.config;
  const n = Math.max(1, input.ranks);
  const sharded = input.backend !== "torch" && n > 1;
  const share = (bytes: number) => (sharded ? bytes / n : bytes);
  const bf16 = input.precision === "bf16";
  const deepspeedBf16 = input.backend === "deepspeed" && bf16;

  const adapters = input.lora ? loraParams(c, input.lora.rank, input.lora.targetModules) : 0;
  const trainableParams = input.trainable ? (input.lora ? adapters : input.params) : 0;
  const T = trainableParams;
  const baseParams = input.sharesBase ? 0 : input.params;
  const weightBytes = !input.trainable ? (bf16 ? 2 : 4) : deepspeedBf16 ? 2 : 4;

  const parameters = share((baseParams + adapters) * weightBytes);
  const gradients = share(T * (deepspeedBf16 ? 2 : 4));
  const optimizer = share(T * ((input.optimizer === "adamw" ? 8 : 0) + (deepspeedBf16 ? 4 : 0)));
  const hasReference = input.trainable && !input.lora && input.klBeta > 0;
  const referenceModel = hasReference ? (input.backend === "fsdp2" ? share(input.params * (bf16 ? 2 : 4)) : input.params * (bf16 ? 2 : 4)) : 0;

  // Sampling: every rank generates for the whole batch.
  const headDim = c.hiddenSize / c.heads;
  const samplesInBf16 = !input.trainable ? bf16 : bf16 && input.backend !== "torch";
  const kvCache = 2 * c.layers * c.kvHeads * headDim * (samplesInBf16 ? 2 : 4) * input.sequences * input.sequenceLength;
  const samplingLogits = 3 * input.sequences * c.vocabSize * 4;
  const gatheredParameters = input.backend === "fsdp2" && sharded ? (baseParams + adapters) * (bf16 ? 2 : 4) : 0;

  // Update: this rank's rows, in micro-batches.
  const rowsPerRank = Math.ceil(input.sequences / n);
  const micro = input.microBatchSize ? Math.min(rowsPerRank, input.microBatchSize) : rowsPerRank;
  const microBatches = Math.max(1, Math.ceil(rowsPerRank / micro));
  const tokens = micro * input.sequenceLength;
  const perLayer = activationBytesPerTokenLayer(c, bf16) * tokens;
  const kept = input.gradientCheckpointing ? c.layers * c.hiddenSize * 4 * tokens + perLayer : c.layers * perLayer;
  const modelLevel = 3 * c.hiddenSize * 4 * tokens;
  const activations = input.trainable ? kept + modelLevel + perLayer : 0;
  const autocastCache = input.trainable && bf16 && input.backend === "torch" ? T * 2 : 0;
  const referenceForward = hasReference || (input.lora && input.klBeta > 0) ? perLayer + modelLevel : 0;

  const hostOnly = {
    parameters: input.trainable && input.backend !== "torch" && input.offloadParams,
    optimizer: input.trainable && input.backend !== "torch" && (input.offloadOptimizer || (input.backend === "fsdp2" && input.offloadParams)),
  };
  const onDevice = {
    parameters: hostOnly.parameters ? 0 : parameters,
    gradients: hostOnly.parameters ? 0 : gradients,
    optimizer: hostOnly.optimizer ? 0 : optimizer,
  };
  // Gradients on the device are freed by zero_grad and rebuilt by backward (see the header).
  const update = input.trainable ? (microBatches > 1 ? onDevice.gradients + activations : Math.max(activations, onDevice.gradients)) + autocastCache : 0;
  const rollout = kvCache + samplingLogits + gatheredParameters;
  const reference = input.trainable ? referenceForward : 0;
  const resident = onDevice.parameters + onDevice.gradients + onDevice.optimizer + referenceModel;
  const total = Math.max(resident + rollout, resident - onDevice.gradients + update, resident + reference);
  return {
    parameters,
    gradients,
    optimizer,
    referenceModel,
    kvCache,
    samplingLogits,
    gatheredParameters,
    activations,
    autocastCache,
    referenceForward,
    trainableParams,
    hostOnly,
    rollout,
    update,
    reference,
    total,
  };
}
