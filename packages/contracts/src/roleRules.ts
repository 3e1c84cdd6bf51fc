/**
 * Rules of `environments[].roles` (role name -> actor: one policy in several roles). RunSpec's superRefine runs
 * them; the runtime mirrors them in gpu-runtime/src/troupe/spec/role_rules.py, and both run the cases of
 * gpu-runtime/tests/fixtures/role_rules.cases.json, so every launch path refuses the same field.
 */
import type { ActorRuleIssue } from "./actorRules";
import { GRPO_FAMILY } from "./algorithms";

/** Kinds whose turns are named by a round spec or by game seats: a role is a name in them (envs/roles.py). */
export const ROLE_ENVIRONMENT_KINDS = ["collaborative", "adversarial", "parallel", "game"] as const;

/** The fields the rules read (RunSpec's output, defaults filled). */
export interface RoleRuleInput {
  actors: { name: string }[];
  datasets: { name: string; evalFraction: number }[];
  environments: { kind: string; dataset: string; actors: string[]; roles?: Record<string, string>; evalOnly: boolean }[];
  algorithm: { name: string };
  trainer: { steps: number; evalEvery: number };
}

export function roleIssues(spec: RoleRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const runActors = new Set(spec.actors.map((a) => a.name));
  const grpo = (GRPO_FAMILY as readonly string[]).includes(spec.algorithm.name);
  spec.environments.forEach((env, i) => {
    if (env.roles === undefined) return;
    const add = (path: (string | number)[], message: string) => issues.push({ path: ["environments", i, ...path], message });
    const roles = Object.entries(env.roles);
    if (roles.length === 0) {
      add(["roles"], "name at least one role (or leave roles out: each actor is then its own role)");
      return;
    }
    if (!(ROLE_ENVIRONMENT_KINDS as readonly string[]).includes(env.kind)) {
      add(["roles"], `a ${env.kind} environment cannot play roles (kinds that can: ${ROLE_ENVIRONMENT_KINDS.join(", ")}): remove roles`);
      return;
    }
    if (!grpo) {
      add(["roles"], `roles are trained by the GRPO family (${GRPO_FAMILY.join(", ")}); ${spec.algorithm.name} reads each actor's turns by actor: use one of those, or drop roles`);
    }
    for (const [role, actor] of roles) {
      if (!runActors.has(actor)) {
        add(["roles", role], `unknown actor "${actor}": a role is played by one of actors[]`);
      } else if (!env.actors.includes(actor)) {
        add(["roles", role], `"${actor}" is not one of this environment's actors (${env.actors.join(", ")}): add it to environments[${i}].actors`);
      }
      if (role !== actor && runActors.has(role)) {
        add(["roles", role], `"${role}" is the name of another actor: a role named after an actor it is not played by is ambiguous in metrics and transcripts; rename the role`);
      }
    }
    const played = new Set(roles.map(([, actor]) => actor));
    const idle = env.actors.filter((a) => !played.has(a));
    if (idle.length > 0) {
      add(["actors"], `${idle.map((a) => `"${a}"`).join(", ")} play${idle.length === 1 ? "s" : ""} no role: map a role to ${idle.length === 1 ? "it" : "them"} in roles, or remove ${idle.length === 1 ? "it" : "them"} from actors`);
    }
  });
  return issues;
}
