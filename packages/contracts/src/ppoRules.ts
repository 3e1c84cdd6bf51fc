/**
 * Rules of the PPO family (`algorithm.name` "ppo", "ippo", "mappo"): learners with critics. RunSpec's
 * superRefine runs them; the runtime mirrors them in gpu-runtime/src/troupe/spec/ppo_rules.py, and both run
 * the cases of gpu-runtime/tests/fixtures/ppo_rules.cases.json, so every launch path refuses the same field.
 */
import type { ActorRuleIssue } from "./actorRules";
import { PPO_FAMILY } from "./algorithms";

export const PPO_ALGORITHMS: readonly string[] = PPO_FAMILY;
/** Environments whose episodes are conversations of several turns (mappo's centralised critic values each turn). */
const SINGLE_TURN_KINDS: readonly string[] = ["single_turn"];

/** The fields the rules read (RunSpec's output, defaults filled). */
export interface PpoRuleInput {
  actors: { name: string; training: { lossType: string } }[];
  environments: { kind: string }[];
  algorithm: { name: string; dynamicSampling: { enabled: boolean }; criticLearningRate?: number; valueNorm?: boolean };
}

export function ppoIssues(spec: PpoRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  const name = spec.algorithm.name;
  const ppo = PPO_ALGORITHMS.includes(name);
  if (!ppo) {
    const critic = `read only by the PPO family (ppo, ippo, mappo), and algorithm.name is "${name}"`;
    if (spec.algorithm.criticLearningRate !== undefined) add(["algorithm", "criticLearningRate"], critic);
    if (spec.algorithm.valueNorm !== undefined) add(["algorithm", "valueNorm"], critic);
    return issues;
  }
  if (name === "mappo") {
    spec.environments.forEach((env, i) => {
      if (SINGLE_TURN_KINDS.includes(env.kind)) {
        add(["environments", i, "kind"], `mappo's centralised critic values every actor's turns of a conversation, and a ${env.kind} environment has one actor and one turn: use ppo (or ippo) for it`);
      }
    });
  }
  if (spec.algorithm.dynamicSampling.enabled) {
    add(["algorithm", "dynamicSampling", "enabled"], `dynamic sampling replaces GRPO groups whose rewards are all equal; ${name} takes its advantages from a critic, not from groups: turn it off`);
  }
  // algorithm.async is refused for every learner outside the GRPO family by asyncRules.ts.
  spec.actors.forEach((a, i) => {
    if (a.training.lossType !== "grpo") {
      add(["actors", i, "training", "lossType"], `${name}'s policy loss is the clipped objective averaged over tokens; lossType "${a.training.lossType}" is a GRPO-family choice: leave it at "grpo"`);
    }
  });
  return issues;
}
