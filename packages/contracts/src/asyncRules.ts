/**
 * What asynchronous rollouts (`algorithm.async`) can run with, each refusal on the field that conflicts. The
 * producer (gpu-runtime/src/troupe/rollout/async_rollout.py, a thread; async_process.py, a process on CPU hosts)
 * plays every environment kind's share, multi-turn episodes whole, from a plain copy of each trainable actor's
 * module (one producer per rank, as each rank of the synchronous loop samples; a sharded backend's copy loaded
 * with the gathered full parameters), or with a vLLM actor's own engine, which must then stay awake while its
 * actor trains (sleepLevel 0). Mirrored by the runtime's spec/async_rules.py; both test the same cases.
 */
import type { ActorRuleIssue, ActorRuleInput } from "./actorRules";

import { ASYNC_ALGORITHMS } from "./algorithms";

export { ASYNC_ALGORITHMS };

export interface AsyncRuleInput {
  actors: (Pick<ActorRuleInput, "backend" | "trainable" | "placement"> & { training: { backend: string }; vllm?: { sleepLevel: number } })[];
  algorithm: { name: string; async?: { maxStaleness: number } };
}

export function asyncIssues(spec: AsyncRuleInput): ActorRuleIssue[] {
  if (!spec.algorithm.async) return [];
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  const why = "asynchronous rollouts (algorithm.async)";
  if (!(ASYNC_ALGORITHMS as readonly string[]).includes(spec.algorithm.name)) {
    add(["algorithm", "async"], `${why} feed the GRPO family (${ASYNC_ALGORITHMS.join(", ")}), not "${spec.algorithm.name}": remove async`);
  }
  issues.push(...copyIssues(spec, why, "algorithm.async", true));
  issues.push(...vllmAsyncIssues(spec));
  return issues;
}

/**
 * The producer samples ahead with each vLLM actor's own engine while the trainer trains, so no engine may sleep
 * between phases: it keeps its gpuMemoryUtilization share of the GPU throughout (sleepLevel 0). Mirrored by
 * spec/async_rules.py `vllm_async_issues`.
 */
export function vllmAsyncIssues(spec: Pick<AsyncRuleInput, "actors">): ActorRuleIssue[] {
  const why = "asynchronous rollouts (algorithm.async)";
  const issues: ActorRuleIssue[] = [];
  spec.actors.forEach((a, i) => {
    const level = a.vllm?.sleepLevel ?? 1;
    if (a.backend === "vllm" && level !== 0) {
      issues.push({
        path: ["actors", i, "vllm", "sleepLevel"],
        message: `${why} keep sampling with the vLLM engine while its actor trains, so the engine cannot sleep to make room (level ${level}): set vllm.sleepLevel to 0 (the engine keeps its gpuMemoryUtilization share of the GPU), or remove algorithm.async`,
      });
    }
  });
  return issues;
}

/** A sampler that copies the actor's weights into transformers (rollout workers) cannot copy a vLLM engine. */
export function vllmCopyIssues(spec: Pick<AsyncRuleInput, "actors">, why: string, remove: string): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  spec.actors.forEach((a, i) => {
    if (a.backend === "vllm") {
      issues.push({ path: ["actors", i, "backend"], message: `${why} sample from a copy of the weights with transformers, not a vLLM engine: use backend hf, or remove ${remove}` });
    }
  });
  return issues;
}

/**
 * What sampling from a plain one-process copy of each actor rules out (asynchronous rollouts and rollout workers
 * both sample so): several ranks, a sharded training backend (a vLLM engine: each caller's own rule,
 * vllmAsyncIssues, vllmCopyIssues). `remove` is the field whose removal lifts the refusal. `perRank`: the caller
 * makes one copy per rank from the gathered full parameters (the async producers), so several ranks and a sharded
 * backend are no obstacle. Mirrored by spec/async_rules.py `copy_issues`.
 */
export function copyIssues(spec: Pick<AsyncRuleInput, "actors">, why: string, remove: string, perRank = false): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  spec.actors.forEach((a, i) => {
    if (a.backend === "openai") return;
    const ranks = a.placement.gpus.length > 0 ? a.placement.gpus.length : (a.placement.processes ?? 1);
    if (ranks > 1 && !perRank) {
      const what = a.placement.gpus.length > 0 ? "gpus" : "processes";
      add(["actors", i, "placement", what], `${why} run in one process; this actor asks for ${ranks} ranks: use one, or remove ${remove}`);
    }
    if (a.trainable && a.training.backend !== "torch" && !perRank) {
      add(["actors", i, "training", "backend"], `${why} copy each trainable actor's plain torch module; "${a.training.backend}" shards it: use torch, or remove ${remove}`);
    }
  });
  return issues;
}
