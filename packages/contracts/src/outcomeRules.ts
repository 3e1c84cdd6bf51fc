/**
 * Rules of the outcome environments (`majority_vote`, `summary`) and of DAPO dynamic sampling on conversations.
 * RunSpec's superRefine runs them; the runtime mirrors them in gpu-runtime/src/troupe/spec/outcome_rules.py, and
 * both test the cases of gpu-runtime/tests/fixtures/outcome_rules.cases.json, so every launch path refuses the
 * same field with the same words.
 */
import type { ActorRuleIssue } from "./actorRules";
import { OUTCOME_ENVIRONMENT_KINDS, OUTCOME_SETTINGS_FIELD, type OutcomeEnvironmentKind } from "./environmentKinds";

/** The fields the rules read (RunSpec's output, defaults filled). */
export interface OutcomeRuleInput {
  environments: {
    kind: string;
    actors: string[];
    roundSpec?: string;
    visibility?: unknown;
    maxTurns: number;
    evalOnly?: boolean;
    majorityVote?: { rewardWeights: { outcome: number; own: number } };
    summary?: { summariser?: string; rewardWeights: { outcome: number; own: number } };
  }[];
  algorithm: { dynamicSampling: { enabled: boolean } };
}

const isOutcome = (kind: string): kind is OutcomeEnvironmentKind => (OUTCOME_ENVIRONMENT_KINDS as readonly string[]).includes(kind);

export function outcomeIssues(spec: OutcomeRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  spec.environments.forEach((env, i) => {
    for (const [kind, field] of Object.entries(OUTCOME_SETTINGS_FIELD)) {
      if (env.kind !== kind && env[field as "majorityVote" | "summary"] !== undefined) {
        add(["environments", i, field], `only ${kind} environments take ${field} settings`);
      }
    }
    if (!isOutcome(env.kind)) return;
    const field = OUTCOME_SETTINGS_FIELD[env.kind];
    const settings = env[field];
    if (env.kind === "majority_vote" && env.actors.length < 2) {
      add(["environments", i, "actors"], "a majority_vote environment has at least two voting actors");
    }
    if (env.kind === "summary" && env.actors.length < 2) {
      add(["environments", i, "actors"], "a summary environment has at least one answering actor and the summariser (at least 2 actors)");
    }
    const summariser = env.summary?.summariser;
    if (env.kind === "summary" && summariser !== undefined && !env.actors.includes(summariser)) {
      add(["environments", i, "summary", "summariser"], `"${summariser}" is not an actor of this environment`);
    }
    if (env.roundSpec !== undefined) {
      add(["environments", i, "roundSpec"], `a ${env.kind} environment decides who speaks (every answering actor once, in parallel${env.kind === "summary" ? ", then the summariser" : ""}): remove the roundSpec`);
    }
    if (env.visibility !== undefined) {
      add(["environments", i, "visibility"], `a ${env.kind} environment decides who sees what (answering actors see only the prompt${env.kind === "summary" ? "; the summariser sees every answer" : ""}): remove visibility`);
    }
    if (env.maxTurns < env.actors.length) {
      add(["environments", i, "maxTurns"], `every actor speaks once: maxTurns must be at least ${env.actors.length} (the number of actors)`);
    }
    if (settings && settings.rewardWeights.outcome === 0 && settings.rewardWeights.own === 0) {
      add(["environments", i, field, "rewardWeights"], "both weights are 0: every reward would be 0 and nothing would learn");
    }
  });
  if (spec.algorithm.dynamicSampling.enabled) {
    const i = spec.environments.findIndex((env) => env.kind !== "single_turn" && !env.evalOnly);
    if (i >= 0) {
      const kind = spec.environments[i]!.kind;
      add(
        ["algorithm", "dynamicSampling", "enabled"],
        `dynamic sampling resamples single-turn groups only, and environments.${i} is a ${kind} environment (its episodes would not be resampled): turn it off, or train that environment in another run`,
      );
    }
  }
  return issues;
}
