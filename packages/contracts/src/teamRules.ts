/**
 * Rules of the team learners (`algorithm.name` vdn, qmix, happo) and of `algorithm.advantage`. RunSpec's
 * superRefine runs them; the runtime mirrors them in gpu-runtime/src/troupe/spec/team_rules.py, and both run the
 * cases of gpu-runtime/tests/fixtures/team_rules.cases.json, so every launch path refuses the same field.
 */
import type { ActorRuleIssue } from "./actorRules";
import { GRPO_FAMILY, TEAM_ALGORITHMS } from "./algorithms";

/** The environment kind whose episodes are one team's conversation (every member's turns, one shared outcome). */
const TEAM_KIND = "collaborative";

/** The fields the rules read (RunSpec's output, defaults filled). */
export interface TeamRuleInput {
  actors: { name: string; trainable: boolean }[];
  environments: { kind: string; actors: string[] }[];
  algorithm: { name: string; advantage: string; valueNorm?: boolean };
}

export function teamIssues(spec: TeamRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  const name = spec.algorithm.name;
  if (spec.algorithm.advantage !== "group" && !(GRPO_FAMILY as readonly string[]).includes(name)) {
    add(["algorithm", "advantage"], `"${spec.algorithm.advantage}" advantages are the GRPO family's (${GRPO_FAMILY.join(", ")}); ${name} takes its advantages elsewhere: leave it at "group"`);
  }
  if (!(TEAM_ALGORITHMS as readonly string[]).includes(name)) return issues;
  const trainable = new Set(spec.actors.filter((a) => a.trainable).map((a) => a.name));
  spec.environments.forEach((env, i) => {
    if (env.kind !== TEAM_KIND) {
      add(["environments", i, "kind"], `${name} learns a team's value from its members' turns of one conversation; a ${env.kind} environment is not a team's: use a ${TEAM_KIND} environment (or mappo/ippo for it)`);
    } else if (env.actors.filter((a) => trainable.has(a)).length < 2) {
      add(["environments", i, "actors"], `${name} trains a team, and this environment has fewer than 2 trainable actors: make 2 or more of its actors trainable (or use ppo/ippo)`);
    }
  });
  if ((name === "vdn" || name === "qmix") && spec.algorithm.valueNorm === true) {
    add(["algorithm", "valueNorm"], `${name}'s mixed value fits the team return itself, in the rewards' units: value normalisation is not applied; leave valueNorm unset`);
  }
  return issues;
}
