/**
 * The update's activation bytes per token from the contracts' memory estimate, for a few shapes, precisions and
 * gradient checkpointing: gpu-runtime/tests/test_micro_batch.py checks that the runtime's port
 * (algorithms/micro_batch.py, which sizes `trainer.microBatchSize: "auto"`) gives the same numbers.
 */
import { estimateActorMemory, type ActorMemoryInput } from "../src/memory/actorMemory";
import { HF_MODEL_CONFIGS, TINY_PRESET_CONFIGS, type ModelConfig } from "../src/memory/modelConfigs";

export interface ActivationCase {
  model: string;
  config: ModelConfig;
  precision: "fp32" | "bf16";
  gradientCheckpointing: boolean;
  /** `estimateActorMemory(...).activations` for one sequence of one token: the bytes per token. */
  bytesPerToken: number;
}

const MODELS = ["tiny-char-2l", "Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-7B"] as const;

export function activationCases(): ActivationCase[] {
  const configs: Record<string, ModelConfig> = { ...TINY_PRESET_CONFIGS, ...HF_MODEL_CONFIGS };
  return MODELS.flatMap((model) => {
    const config = configs[model]!;
    return (["fp32", "bf16"] as const).flatMap((precision) =>
      [false, true].map((gradientCheckpointing) => {
        const input: ActorMemoryInput = {
          params: 1,
          config,
          trainable: true,
          optimizer: "adamw",
          klBeta: 0,
          precision,
          backend: "torch",
          offloadOptimizer: false,
          offloadParams: false,
          sequences: 1,
          sequenceLength: 1,
          ranks: 1,
          gradientCheckpointing,
        };
        return { model, config, precision, gradientCheckpointing, bytesPerToken: estimateActorMemory(input).activations };
      }),
    );
  });
}
