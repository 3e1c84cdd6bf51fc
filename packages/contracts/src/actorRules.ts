/**
 * Combinations of actor settings that cannot work, each refused with the reason. The single source
 * of these rules: ActorSpec's superRefine runs them, so the designer form, the REST API and
 * `troupe validate` all say the same thing about the same field.
 */
import { type AsyncRuleInput, asyncIssues } from "./asyncRules";
import { type RolloutRuleInput, rolloutIssues } from "./rolloutRules";

export interface ActorRuleIssue {
  path: (string | number)[];
  message: string;
}

/** The fields the rules read (ActorSpec's output, defaults filled). */
export interface ActorRuleInput {
  model: { source: "tiny" | "huggingface" | "local" | "run" };
  backend: "hf" | "vllm" | "openai";
  api?: unknown;
  vllm?: { tensorParallel: number; sleepLevel: 0 | 1 | 2 };
  trainable: boolean;
  training: {
    clipEpsLow: number;
    clipEpsHigh: number;
    lora?: unknown;
    offload: { params: boolean; optimizer: boolean };
    backend: "torch" | "fsdp2" | "deepspeed";
  };
  sampling: { temperature: number };
  placement: { gpus: number[]; processes?: number };
}

/** Ranks an actor asks for: its GPUs, else its CPU processes, else none (it follows the run's ranks). */
export function actorRanks(actor: ActorRuleInput): number | null {
  if (actor.backend === "openai") return null;
  if (actor.placement.gpus.length > 0) return actor.placement.gpus.length;
  return actor.placement.processes ?? null;
}

export function actorIssues(actor: ActorRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  const isApi = actor.backend === "openai";

  if (isApi && !actor.api) add(["api"], "an openai-backend actor needs `api` (baseUrl, model)");
  if (!isApi && actor.api) add(["api"], `\`api\` is only used by the openai backend; this actor runs locally with "${actor.backend}"`);
  if (isApi && actor.trainable) add(["trainable"], "an actor behind an API cannot be trained: set trainable to false");
  if (isApi && actor.training.lora) add(["training", "lora"], "an actor behind an API has no local weights to put LoRA adapters on");
  if (isApi && actor.placement.gpus.length > 0) add(["placement", "gpus"], "an actor behind an API runs elsewhere and takes no GPUs here");
  if (actor.backend === "vllm" && actor.model.source === "tiny") {
    add(["backend"], "tiny presets are built in-process with a character tokenizer that vLLM cannot load: use backend hf");
  }
  if (actor.vllm && actor.backend !== "vllm") {
    add(["vllm"], `\`vllm\` settings are only used by the vllm backend; this actor samples with "${actor.backend}"`);
  }
  if (actor.backend === "vllm" && actor.vllm) {
    const gpus = actor.placement.gpus.length;
    if (actor.vllm.tensorParallel > 1 && actor.vllm.tensorParallel !== gpus) {
      add(
        ["vllm", "tensorParallel"],
        `shards the engine over ${actor.vllm.tensorParallel} GPUs, but the actor is placed on ${gpus}: give placement.gpus that many GPUs, or use 1`,
      );
    }
    if (!actor.trainable && actor.vllm.sleepLevel === 2) {
      add(["vllm", "sleepLevel"], "level 2 drops the weights while the others train, and a frozen actor has no trainer to push them back: use 1");
    }
  }
  if (!actor.trainable && actor.training.lora) {
    add(["training", "lora"], "LoRA adapters are trained weights; a frozen actor never trains them (set trainable, or remove lora)");
  }
  if (!actor.trainable && actor.training.offload.optimizer) {
    add(["training", "offload", "optimizer"], "a frozen actor has no optimizer state to offload");
  }
  if (actor.trainable && actor.sampling.temperature === 0) {
    add(
      ["sampling", "temperature"],
      "greedy sampling (0) gives every completion of a group the same text: zero advantage, nothing is learned; use a temperature > 0 (evalSampling may be greedy)",
    );
  }
  if (actor.training.clipEpsHigh < actor.training.clipEpsLow) {
    add(["training", "clipEpsHigh"], `must be at least clipEpsLow (${actor.training.clipEpsLow}): the upper clip bound is 1 + clipEpsHigh`);
  }
  if (isApi && actor.training.backend !== "torch") {
    add(["training", "backend"], "an actor behind an API is not trained here: its training backend stays torch");
  }
  if (isApi && actor.placement.processes !== undefined) {
    add(["placement", "processes"], "an actor behind an API runs elsewhere and takes no processes here");
  }
  if (actor.placement.gpus.length > 0 && actor.placement.processes !== undefined) {
    add(["placement", "processes"], "give either GPUs or CPU processes, not both: processes are CPU ranks for hosts without GPUs");
  }
  if (!isApi && !actor.trainable && actor.training.backend !== "torch") {
    add(["training", "backend"], `a frozen actor is never updated, so "${actor.training.backend}" would do nothing: leave it at torch`);
  }
  const seen = new Set<number>();
  for (const gpu of actor.placement.gpus) {
    if (seen.has(gpu)) add(["placement", "gpus"], `lists GPU ${gpu} twice`);
    seen.add(gpu);
  }
  return issues;
}

/** The fields the run-wide rules read (RunSpec's output, defaults filled). */
export interface RunRuleInput {
  actors: (ActorRuleInput & { name: string; training: ActorRuleInput["training"] & { lora?: unknown } })[];
  trainer: { offloadBetweenPhases?: boolean };
}

/**
 * Rules that span several actors or an actor and the trainer. One run has one set of ranks: every local
 * actor that names GPUs or processes names the same number, and an actor that names none follows them.
 */
export function runIssues(spec: RunRuleInput & AsyncRuleInput & RolloutRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const placed = spec.actors.map((a, i) => ({ i, a, ranks: actorRanks(a) })).filter((x) => x.ranks !== null);
  const first = placed[0];
  for (const other of placed.slice(1)) {
    if (first && other.ranks !== first.ranks) {
      const what = other.a.placement.gpus.length > 0 ? "gpus" : "processes";
      issues.push({
        path: ["actors", other.i, "placement", what],
        message: `asks for ${other.ranks} ranks but "${first.a.name}" asks for ${first.ranks}: all actors of a run share its ranks (give each the same number of GPUs or processes, or none)`,
      });
    }
  }
  const gpuHosts = placed.filter((x) => x.a.placement.gpus.length > 0);
  const cpuHosts = placed.filter((x) => x.a.placement.processes !== undefined);
  if (gpuHosts.length > 0 && cpuHosts[0]) {
    issues.push({
      path: ["actors", cpuHosts[0].i, "placement", "processes"],
      message: `"${gpuHosts[0]!.a.name}" runs on GPUs; one run does not mix GPU ranks and CPU processes`,
    });
  }
  const between = spec.trainer.offloadBetweenPhases;
  const sharedGpu = sharesAGpu(spec.actors);
  spec.actors.forEach((a, i) => {
    if (a.training.backend !== "deepspeed") return;
    // DeepSpeed issue 6596: offload_states after a step with the CPU optimizer (offload_optimizer) fails;
    // with offload_param on, offload_states asserts.
    if (between === true && (a.training.offload.optimizer || a.training.offload.params)) {
      issues.push({
        path: ["trainer", "offloadBetweenPhases"],
        message: `"${a.name}" keeps its ${a.training.offload.optimizer ? "optimizer" : "parameters"} on the CPU with DeepSpeed (training.offload); DeepSpeed cannot also offload its states between phases (DeepSpeed issue 6596): turn one off`,
      });
    } else if (between === undefined && sharedGpu) {
      for (const what of ["optimizer", "params"] as const) {
        if (!a.training.offload[what]) continue;
        issues.push({
          path: ["actors", i, "training", "offload", what],
          message: `actors here share a GPU, so offloading between phases is on by default, and DeepSpeed cannot offload its states while it keeps its ${what === "params" ? "parameters" : "optimizer"} on the CPU (DeepSpeed issue 6596): set trainer.offloadBetweenPhases to false, or turn this off`,
        });
      }
    }
  });
  issues.push(...asyncIssues(spec));
  issues.push(...rolloutIssues(spec));
  return issues;
}

/** Two or more local actors placed on the same GPU index (between-phase offload's default is then on). */
function sharesAGpu(actors: ActorRuleInput[]): boolean {
  const seen = new Set<number>();
  for (const a of actors) {
    if (a.backend === "openai") continue;
    for (const gpu of a.placement.gpus) {
      if (seen.has(gpu)) return true;
      seen.add(gpu);
    }
  }
  return false;
}
