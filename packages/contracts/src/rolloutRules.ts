/**
 * What rollout workers (`rollout.workers`) can run with, each refusal on the field that conflicts. The pool
 * (gpu-runtime/src/troupe/rollout/workers.py) samples in CPU processes, on policy or ahead (algorithm.async), or on
 * GPUs (on policy: the weights by an NCCL broadcast; ahead: through the same host shared-memory slots as CPU
 * workers, so the trainer never waits in a collective), for a GRPO-family run whose
 * actors are one-rank transformers models trained with torch. Mirrored by the runtime's spec/rollout_rules.py
 * (same paths, same messages), so the designer, the REST API and the CLI refuse before anything is queued.
 * The gpus/processes choice itself is RolloutWorkersSpec's refinement in runSpec.ts.
 */
import type { ActorRuleIssue, ActorRuleInput } from "./actorRules";

import { ASYNC_ALGORITHMS } from "./algorithms";
import { copyIssues, vllmCopyIssues } from "./asyncRules";

export interface RolloutRuleInput {
  actors: (Pick<ActorRuleInput, "backend" | "trainable" | "placement"> & { training: { backend: string } })[];
  algorithm: { name: string; async?: { maxStaleness: number }; dynamicSampling: { enabled: boolean } };
  trainer: { device?: string };
  rollout?: { workers?: { count: number; gpus?: number[]; processes?: true } };
}

const WHY = "rollout workers (rollout.workers)";

/**
 * `host.cudaAvailable`: whether the runner has CUDA; unknown (the schema's own check, before a runner is chosen):
 * GPU workers are not refused for it here, the runner refuses them when it has none.
 */
export function rolloutIssues(spec: RolloutRuleInput, host: { cudaAvailable?: boolean } = {}): ActorRuleIssue[] {
  const workers = spec.rollout?.workers;
  if (!workers) return [];
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  if (workers.gpus !== undefined) {
    // GPU workers take the weights by an NCCL broadcast from a CUDA trainer (spec/rollout_rules.py says the same).
    if (host.cudaAvailable === false) {
      add(["rollout", "workers", "gpus"], `GPU ${WHY} need a CUDA host and this runner has none: use processes: true (CPU workers)`);
    }
    if (spec.trainer.device === "cpu") {
      add(["trainer", "device"], `GPU ${WHY} take their weights from a CUDA trainer (NCCL): set trainer.device to cuda or auto`);
    }
  } else if (spec.trainer.device === "cuda") {
    add(["trainer", "device"], `CPU ${WHY} serve a CPU trainer: set trainer.device to cpu, or remove rollout.workers`);
  }
  if (!(ASYNC_ALGORITHMS as readonly string[]).includes(spec.algorithm.name)) {
    add(["rollout", "workers"], `${WHY} sample for the GRPO family (${ASYNC_ALGORITHMS.join(", ")}), not "${spec.algorithm.name}": remove rollout.workers`);
  }
  if (spec.algorithm.dynamicSampling.enabled) {
    add(["algorithm", "dynamicSampling", "enabled"], `${WHY} sample the rows the trainer drew; dynamic sampling's refills draw more: turn it off, or remove rollout.workers`);
  }
  issues.push(...copyIssues(spec, WHY, "rollout.workers"));
  issues.push(...vllmCopyIssues(spec, WHY, "rollout.workers"));
  return issues;
}
