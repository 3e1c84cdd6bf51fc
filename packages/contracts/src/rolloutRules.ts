/**
 * What rollout workers (`rollout.workers`) can run with, each refusal on the field that conflicts. The pool
 * (gpu-runtime/src/troupe/rollout/workers.py) samples in CPU processes, on policy or ahead (algorithm.async), for a GRPO-family run whose
 * actors are one-rank transformers models trained with torch. Mirrored by the runtime's spec/rollout_rules.py
 * (same paths, same messages), so the designer, the REST API and the CLI refuse before anything is queued.
 * The gpus/processes choice itself is RolloutWorkersSpec's refinement in runSpec.ts.
 */
import type { ActorRuleIssue, ActorRuleInput } from "./actorRules";

import { ASYNC_ALGORITHMS } from "./algorithms";
import { copyIssues } from "./asyncRules";

export interface RolloutRuleInput {
  actors: (Pick<ActorRuleInput, "backend" | "trainable" | "placement"> & { training: { backend: string } })[];
  algorithm: { name: string; async?: { maxStaleness: number }; dynamicSampling: { enabled: boolean } };
  trainer: { device?: string };
  rollout?: { workers?: { count: number; gpus?: number[]; processes?: true } };
}

const WHY = "rollout workers (rollout.workers)";

export function rolloutIssues(spec: RolloutRuleInput): ActorRuleIssue[] {
  const workers = spec.rollout?.workers;
  if (!workers) return [];
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  if (workers.gpus !== undefined) {
    add(["rollout", "workers", "gpus"], `GPU ${WHY} are not supported yet (the NCCL weight broadcast is not built yet): use processes: true (CPU workers, gloo)`);
  }
  if (spec.trainer.device === "cuda") {
    add(["trainer", "device"], `CPU ${WHY} serve a CPU trainer: set trainer.device to cpu, or remove rollout.workers`);
  }
  if (!(ASYNC_ALGORITHMS as readonly string[]).includes(spec.algorithm.name)) {
    add(["rollout", "workers"], `${WHY} sample for the GRPO family (${ASYNC_ALGORITHMS.join(", ")}), not "${spec.algorithm.name}": remove rollout.workers`);
  }
  if (spec.algorithm.dynamicSampling.enabled) {
    add(["algorithm", "dynamicSampling", "enabled"], `${WHY} sample the rows the trainer drew; dynamic sampling's refills draw more: turn it off, or remove rollout.workers`);
  }
  issues.push(...copyIssues(spec, WHY, "rollout.workers"));
  return issues;
}
