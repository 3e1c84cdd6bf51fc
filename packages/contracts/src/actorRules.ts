/**
 * Combinations of actor settings that cannot work, each refused with the reason. The single source
 * of these rules: ActorSpec's superRefine runs them, so the designer form, the REST API and
 * `troupe validate` all say the same thing about the same field.
 */

export interface ActorRuleIssue {
  path: (string | number)[];
  message: string;
}

/** The fields the rules read (ActorSpec's output, defaults filled). */
export interface ActorRuleInput {
  model: { source: "tiny" | "huggingface" | "local" };
  backend: "hf" | "vllm" | "openai";
  api?: unknown;
  trainable: boolean;
  training: {
    clipEpsLow: number;
    clipEpsHigh: number;
    lora?: unknown;
    offload: { params: boolean; optimizer: boolean };
  };
  sampling: { temperature: number };
  placement: { gpus: number[] };
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
  const seen = new Set<number>();
  for (const gpu of actor.placement.gpus) {
    if (seen.has(gpu)) add(["placement", "gpus"], `lists GPU ${gpu} twice`);
    seen.add(gpu);
  }
  return issues;
}
