import { parse, stats } from "@troupe/dsl";
import type { RunSpec } from "@troupe/contracts";
import { estimateActorMemory, gpuLoads, type ActorMemory, type GpuLoad } from "./memoryEstimate";
import { knownHfConfig, nearestConfig, paramsFromConfig, TINY_PRESET_CONFIGS, type ModelConfig } from "./modelConfigs";

/** What the user adds to the spec for the estimate: nothing here changes the run. */
export interface MemoryAssumptions {
  gpuMemoryGiB: number;
  /** Prompt length in tokens (the spec does not know it before the dataset is tokenized). */
  promptTokens: number;
  /** Parameter counts typed in for models the catalog does not know, by actor name. */
  paramsOverride: Record<string, number>;
}

export const DEFAULT_ASSUMPTIONS: MemoryAssumptions = { gpuMemoryGiB: 80, promptTokens: 256, paramsOverride: {} };

export interface ActorEstimate {
  name: string;
  /** Where the shape came from: a preset, the catalog, or a typed parameter count. */
  basis: "preset" | "catalog" | "typed" | "unknown";
  params: number | null;
  turns: number;
  sequenceLength: number;
  gpus: number[];
  memory: ActorMemory | null;
}

function configOf(actor: RunSpec["actors"][number]): ModelConfig | undefined {
  if (actor.model.source === "tiny") return TINY_PRESET_CONFIGS[actor.model.preset];
  if (actor.model.source === "huggingface") return knownHfConfig(actor.model.id);
  return undefined;
}

/** Most turns (rounded up from the expected count) the actor takes in any environment it is in. */
function turnsOf(spec: RunSpec, actor: string): number {
  let turns = 1;
  for (const env of spec.environments) {
    if (!env.actors.includes(actor) || !env.roundSpec) continue;
    const parsed = parse(env.roundSpec);
    if (!parsed.ok) continue;
    const expected = stats(parsed.ast, { actors: env.actors }).actors[actor]?.expectedTurns ?? 1;
    turns = Math.max(turns, Math.ceil(expected));
  }
  return turns;
}

export function estimateSpecMemory(spec: RunSpec, a: MemoryAssumptions): { actors: ActorEstimate[]; gpus: GpuLoad[] } {
  const sequences = spec.trainer.promptsPerStep * spec.algorithm.groupSize;
  const actors: ActorEstimate[] = spec.actors.map((actor) => {
    const known = configOf(actor);
    const typed = a.paramsOverride[actor.name];
    const params = typed && typed > 0 ? typed : known ? paramsFromConfig(known) : null;
    const basis: ActorEstimate["basis"] = typed && typed > 0 ? "typed" : known ? (actor.model.source === "tiny" ? "preset" : "catalog") : "unknown";
    const turns = turnsOf(spec, actor.name);
    const sequenceLength = a.promptTokens + turns * actor.sampling.maxNewTokens;
    const gpus = actor.placement.gpus;
    // An API actor runs elsewhere: it takes no memory on our GPUs.
    if (params === null || actor.backend === "openai") {
      return { name: actor.name, basis, params, turns, sequenceLength, gpus, memory: null };
    }
    const memory = estimateActorMemory({
      params,
      config: known ?? nearestConfig(params),
      trainable: actor.trainable,
      optimizer: actor.training.optimizer,
      ...(actor.training.lora ? { lora: { rank: actor.training.lora.rank, targetModules: actor.training.lora.targetModules } } : {}),
      klBeta: actor.training.klBeta,
      offloadOptimizer: actor.training.offload.optimizer,
      offloadParams: actor.training.offload.params,
      weightBytes: actor.training.precision === "bf16" ? 2 : 4,
      gradientCheckpointing: actor.training.gradientCheckpointing,
      ...(spec.trainer.microBatchSize !== undefined ? { microBatchSize: spec.trainer.microBatchSize } : {}),
      sequences,
      sequenceLength,
      gpus: Math.max(1, gpus.length),
    });
    return { name: actor.name, basis, params, turns, sequenceLength, gpus, memory };
  });
  const placed = actors.flatMap((x) => (x.memory ? [{ name: x.name, gpus: x.gpus, memory: x.memory }] : []));
  return { actors, gpus: gpuLoads(placed, a.gpuMemoryGiB * 1024 ** 3, spec.trainer.offloadBetweenPhases) };
}
