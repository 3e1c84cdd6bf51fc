/**
 * Rules of `algorithm.name: "cory"` (CORY: a pioneer and an observer of one base exchanging roles). RunSpec's
 * superRefine runs them; the runtime mirrors them in gpu-runtime/src/troupe/spec/cory_rules.py, and both run the
 * cases of gpu-runtime/tests/fixtures/cory_rules.cases.json, so every launch path refuses the same field.
 */
import type { ActorRuleIssue } from "./actorRules";
import { CORY_ROLES, ROLE_EXCHANGE_ALGORITHMS } from "./algorithms";

/** The round CORY plays: the pioneer answers, then the observer answers having read it. */
export const CORY_ROUND = `${CORY_ROLES[0]} -> ${CORY_ROLES[1]}`;
const CORY_KIND = "collaborative";

/** The fields the rules read (RunSpec's output, defaults filled). */
export interface CoryRuleInput {
  actors: { name: string; trainable: boolean; model: unknown }[];
  environments: { kind: string; roles?: Record<string, string>; roundSpec?: string }[];
  algorithm: { name: string; async?: unknown };
  rollout?: { workers?: unknown };
}

export function coryIssues(spec: CoryRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const name = spec.algorithm.name;
  if (!(ROLE_EXCHANGE_ALGORITHMS as readonly string[]).includes(name)) return issues;
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  const [pioneer, observer] = CORY_ROLES;
  const actors = new Map(spec.actors.map((a) => [a.name, a]));
  let paired = 0;
  spec.environments.forEach((env, i) => {
    if (env.roles === undefined) return;
    const at = (path: (string | number)[], message: string) => add(["environments", i, ...path], message);
    const roles = Object.keys(env.roles);
    if (roles.length !== 2 || !roles.includes(pioneer) || !roles.includes(observer)) {
      at(["roles"], `${name} plays exactly two roles, "${pioneer}" and "${observer}" (got ${roles.map((r) => `"${r}"`).join(", ") || "none"}): map each to one of its two actors`);
      return;
    }
    paired += 1;
    if (env.kind !== CORY_KIND) {
      at(["kind"], `${name}'s observer reads the pioneer's answer in one conversation: use a ${CORY_KIND} environment, not ${env.kind}`);
    }
    if ((env.roundSpec ?? "").replace(/\s+/g, " ").trim() !== CORY_ROUND) {
      at(["roundSpec"], `${name} plays "${CORY_ROUND}" (the pioneer answers, the observer answers after it): set roundSpec to that`);
    }
    const first = actors.get(env.roles[pioneer]!);
    const second = actors.get(env.roles[observer]!);
    if (first === undefined || second === undefined) return; // unknown actors: the role rules name them
    if (first.name === second.name) {
      at(["roles", observer], `"${second.name}" plays both roles; ${name} exchanges the roles of two actors: give the observer a second actor (a copy of the pioneer's base)`);
      return;
    }
    for (const [role, actor] of [[pioneer, first], [observer, second]] as const) {
      if (!actor.trainable) at(["roles", role], `"${actor.name}" is frozen; ${name} trains both the pioneer and the observer: make it trainable`);
    }
    if (JSON.stringify(first.model) !== JSON.stringify(second.model)) {
      at(["roles", observer], `"${second.name}" has another model than the pioneer "${first.name}"; ${name}'s pair are two copies of one base: give both the same model`);
    }
  });
  if (paired === 0 && issues.length === 0) {
    add(["environments"], `${name} needs an environment whose roles are "${pioneer}" and "${observer}" (environments[].roles), played by two trainable actors of one base`);
  }
  // The role exchange changes who plays which role between steps: a batch sampled ahead would be played by the old map.
  if (spec.algorithm.async !== undefined) {
    add(["algorithm", "async"], `${name} exchanges roles between steps, and a batch sampled ahead would be played with the previous roles: remove async`);
  }
  if (spec.rollout?.workers !== undefined) {
    add(["rollout", "workers"], `${name} exchanges roles between steps, which rollout workers do not see: remove rollout.workers`);
  }
  return issues;
}
