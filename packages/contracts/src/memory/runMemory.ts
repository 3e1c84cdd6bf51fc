import type { RunSpec } from "../runSpec";
import { estimateActorMemory, type ActorMemory } from "./actorMemory";
import { knownHfConfig, nearestConfig, paramsFromConfig, TINY_PRESET_CONFIGS, type ModelConfig } from "./modelConfigs";
import { deviceLoads, GIB, phaseLoads, type DeviceLoad, type PhaseLoad, type PlacedActor } from "./phaseMemory";

/** What the user adds to the spec for the estimate: nothing here changes the run. */
export interface MemoryAssumptions {
  gpuMemoryGiB: number;
  /** Prompt length in tokens (the spec does not know it before the dataset is tokenized). */
  promptTokens: number;
  /** Parameter counts typed in for models the catalog does not know, by actor name. */
  paramsOverride: Record<string, number>;
  /** Full shapes for models the catalog does not know (a local folder's config.json), by actor name. */
  configOverride?: Record<string, ModelConfig>;
}

export const DEFAULT_ASSUMPTIONS: MemoryAssumptions = { gpuMemoryGiB: 80, promptTokens: 256, paramsOverride: {} };

export interface ActorEstimate {
  name: string;
  /** Where the shape came from: a preset, the catalog, a given config, or a typed parameter count. */
  basis: "preset" | "catalog" | "config" | "typed" | "unknown";
  params: number | null;
  turns: number;
  sequenceLength: number;
  gpus: number[];
  memory: ActorMemory | null;
}

export interface RunMemoryEstimate {
  actors: ActorEstimate[];
  /** Per device, phase and actor: the rows a run's measured memory is compared with. */
  phases: PhaseLoad[];
  devices: DeviceLoad[];
  /** Whether the run trains on the CPU (host RAM is the device). */
  onCpu: boolean;
}

function configOf(actor: RunSpec["actors"][number], a: MemoryAssumptions): { config?: ModelConfig; basis: ActorEstimate["basis"] } {
  const given = a.configOverride?.[actor.name];
  if (given) return { config: given, basis: "config" };
  if (actor.model.source === "tiny") return { config: TINY_PRESET_CONFIGS[actor.model.preset], basis: "preset" };
  if (actor.model.source === "huggingface") {
    const known = knownHfConfig(actor.model.id);
    if (known) return { config: known, basis: "catalog" };
  }
  return { basis: "unknown" };
}

/** The runtime's rank count (distributed.run_ranks): the most GPUs or processes any local actor names. */
export function runRanks(spec: RunSpec): number {
  let ranks = 1;
  for (const actor of spec.actors) {
    if (actor.backend === "openai") continue;
    ranks = Math.max(ranks, actor.placement.gpus.length, actor.placement.processes ?? 1);
  }
  return ranks;
}

/** shared_lora.base_key: trainable LoRA actors on the same model share one base. */
function baseKey(actor: RunSpec["actors"][number]): string | null {
  if (actor.backend !== "hf" || !actor.trainable || !actor.training.lora) return null;
  return JSON.stringify(actor.model, Object.keys(actor.model).sort());
}

/**
 * The estimate for a spec: each actor's parts, then per device and phase. `turnsOf(actor)` is the most
 * turns the actor takes in an episode (the web reads it from the round spec; 1 without one).
 * `device: "cpu"` (or trainer.device "cpu") estimates host RAM of a CPU run; otherwise GPUs.
 */
export function estimateRunMemory(
  spec: RunSpec,
  a: MemoryAssumptions,
  turnsOf: (actor: string) => number = () => 1,
  device?: "cpu" | "gpu",
): RunMemoryEstimate {
  const onCpu = (device ?? (spec.trainer.device === "cpu" ? "cpu" : "gpu")) === "cpu";
  const sequences = spec.trainer.promptsPerStep * spec.algorithm.groupSize;
  const ranks = runRanks(spec);
  const baseOwners = new Map<string, string>();
  const bases = new Map<string, string>();
  for (const actor of spec.actors) {
    const key = baseKey(actor);
    if (key === null) continue;
    if (bases.has(key)) baseOwners.set(actor.name, bases.get(key)!);
    else bases.set(key, actor.name);
  }
  const sharing = new Set([...baseOwners.keys(), ...baseOwners.values()]);
  const samplers = new Set(spec.environments.flatMap((e) => e.actors));

  const actors: ActorEstimate[] = spec.actors.map((actor) => {
    const { config: known, basis: knownBasis } = configOf(actor, a);
    const typed = a.paramsOverride[actor.name];
    const params = typed && typed > 0 ? typed : known ? paramsFromConfig(known) : null;
    const basis: ActorEstimate["basis"] = typed && typed > 0 ? "typed" : knownBasis;
    const turns = turnsOf(actor.name);
    const sequenceLength = a.promptTokens + turns * actor.sampling.maxNewTokens;
    const gpus = actor.placement.gpus;
    // An API actor runs elsewhere: it takes no memory here.
    if (params === null || actor.backend === "openai") {
      return { name: actor.name, basis, params, turns, sequenceLength, gpus, memory: null };
    }
    const t = actor.training;
    const memory = estimateActorMemory({
      params,
      config: known ?? nearestConfig(params),
      trainable: actor.trainable,
      optimizer: t.optimizer,
      ...(t.lora ? { lora: { rank: t.lora.rank, targetModules: t.lora.targetModules } } : {}),
      sharesBase: baseOwners.has(actor.name),
      // DPO keeps a frozen reference copy (actors.py) exactly as a KL term does: estimate it as one.
      klBeta: spec.algorithm.name === "dpo" ? Math.max(t.klBeta, 1) : t.klBeta,
      precision: t.precision,
      backend: t.backend,
      offloadOptimizer: t.offload.optimizer,
      offloadParams: t.offload.params,
      gradientCheckpointing: t.gradientCheckpointing,
      // "auto" is sized on the device at the update (its free memory is not known here): estimated as the whole batch, its upper bound.
      ...(typeof spec.trainer.microBatchSize === "number" ? { microBatchSize: spec.trainer.microBatchSize } : {}),
      sequences,
      sequenceLength,
      ranks,
    });
    return { name: actor.name, basis, params, turns, sequenceLength, gpus, memory };
  });

  const placed: PlacedActor[] = actors.flatMap((x) => {
    if (!x.memory) return [];
    const actor = spec.actors.find((s) => s.name === x.name)!;
    // An actor without placement sits on the run's device (rank 0's GPU); a LoRA actor on a shared base where its owner is.
    const owner = baseOwners.get(x.name);
    const gpus = owner ? (spec.actors.find((s) => s.name === owner)?.placement.gpus ?? x.gpus) : x.gpus;
    const devices = onCpu ? ["cpu"] : (gpus.length > 0 ? gpus : [0]).map((g) => `cuda:${g}`);
    return [
      {
        name: x.name,
        devices,
        memory: x.memory,
        trainable: actor.trainable,
        samples: samplers.has(x.name),
        sharedBase: sharing.has(x.name),
        backend: actor.training.backend,
        offloadParams: actor.training.offload.params,
        offloadOptimizer: actor.training.offload.optimizer,
      },
    ];
  });
  const options = { hostIsDevice: onCpu, ...(spec.trainer.offloadBetweenPhases !== undefined ? { offloadBetweenPhases: spec.trainer.offloadBetweenPhases } : {}) };
  const phases = phaseLoads(placed, options);
  return { actors, phases, devices: deviceLoads(placed, phases, a.gpuMemoryGiB * GIB, options), onCpu };
}
