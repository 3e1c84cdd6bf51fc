import { ASYNC_ALGORITHMS, GRPO_FAMILY, OFFLINE_ALGORITHMS, PPO_ALGORITHMS, ROLE_EXCHANGE_ALGORITHMS } from "@troupe/contracts";
import type { Draft } from "./draftPath";

/**
 * A draft's `algorithm` once the learner changes to `name`: the optional settings that only another learner
 * reads are dropped (the composer hides their inputs), so a switch from ppo to grpo does not leave the draft
 * refused at a `valueNorm` nobody can see any more. Settings the new learner also reads stay.
 */
export function switchLearner(algorithm: Draft | undefined, name: string): Draft {
  const next: Draft = { ...(algorithm ?? {}), name };
  const drop = (...keys: string[]) => keys.forEach((k) => delete next[k]);
  if (!PPO_ALGORITHMS.includes(name)) drop("criticLearningRate", "valueNorm");
  if (name !== "dpo") drop("labelSmoothing");
  if (OFFLINE_ALGORITHMS.includes(name)) drop("importanceCorrection", "entropyCoef");
  // cory exchanges roles between steps, which a batch sampled ahead would not see: it samples synchronously.
  if (!(ASYNC_ALGORITHMS as readonly string[]).includes(name) || (ROLE_EXCHANGE_ALGORITHMS as readonly string[]).includes(name)) drop("async");
  // algorithm.advantage (rae, hierarchical) is the GRPO family's: its picker is hidden for the others.
  if (!(GRPO_FAMILY as readonly string[]).includes(name)) drop("advantage");
  // Dynamic sampling refills GRPO groups: only the GRPO family has them.
  const dynamic = next.dynamicSampling as Draft | undefined;
  if ((OFFLINE_ALGORITHMS.includes(name) || PPO_ALGORITHMS.includes(name)) && dynamic?.enabled === true) drop("dynamicSampling");
  return next;
}
