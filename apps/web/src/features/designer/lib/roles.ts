import { ROLE_ENVIRONMENT_KINDS } from "@troupe/contracts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Draft = Record<string, any>;

/**
 * `environments[].roles` in the designer (gpu-runtime envs/roles.py): role name -> actor. Every edit keeps the
 * environment's `actors` equal to the actors the roles map to (the contracts refuse an actor that plays no role),
 * and moves a role's system prompt with it, so a draft never carries a half-done mapping the person did not write.
 */

export const playsRoles = (kind: string): boolean => (ROLE_ENVIRONMENT_KINDS as readonly string[]).includes(kind);

export function rolesOf(draft: Draft): Record<string, string> | undefined {
  const roles = draft.roles;
  return roles && typeof roles === "object" && !Array.isArray(roles) ? (roles as Record<string, string>) : undefined;
}

/** The names the round spec and the system prompts use: the roles when the draft names them, else the actors. */
export function playerNames(draft: Draft): string[] {
  const roles = rolesOf(draft);
  if (roles) return Object.keys(roles);
  return Array.isArray(draft.actors) ? draft.actors : [];
}

/** The actors the roles map to, in the order they first appear. */
function actorsOf(roles: Record<string, string>): string[] {
  return [...new Set(Object.values(roles).filter((a) => a !== ""))];
}

function withRoles(draft: Draft, roles: Record<string, string>): Draft {
  return { ...draft, roles, actors: actorsOf(roles) };
}

/** Roles on: each of the environment's actors its own role (the same run as without roles); off: roles gone. */
export function withRolesOn(draft: Draft, on: boolean): Draft {
  if (!on) {
    const next = { ...draft };
    delete next.roles;
    return next;
  }
  const actors: string[] = Array.isArray(draft.actors) ? draft.actors : [];
  return withRoles(draft, Object.fromEntries(actors.map((a) => [a, a])));
}

/** `role` played by `actor` (a new role goes last). */
export function withRole(draft: Draft, role: string, actor: string): Draft {
  return withRoles(draft, { ...(rolesOf(draft) ?? {}), [role]: actor });
}

/**
 * Who a new role starts with: an actor this environment already uses (a new seat is most often the same policy in
 * another role, as in self-play), else the run's first actor.
 */
export function newRoleActor(draft: Draft, actorNames: string[]): string {
  const own: string[] = Array.isArray(draft.actors) ? draft.actors : [];
  return own.find((a) => actorNames.includes(a)) ?? actorNames[0] ?? "";
}

/** A role removed, with its system prompt. */
export function withoutRole(draft: Draft, role: string): Draft {
  const roles = { ...(rolesOf(draft) ?? {}) };
  delete roles[role];
  const prompts = { ...(draft.systemPrompts ?? {}) };
  delete prompts[role];
  return { ...withRoles(draft, roles), systemPrompts: prompts };
}

/** A role renamed in place (its position, actor and system prompt kept); a name already taken is refused (null). */
export function renamedRole(draft: Draft, from: string, to: string): Draft | null {
  const roles = rolesOf(draft) ?? {};
  if (to === from) return draft;
  if (to in roles) return null;
  const next = Object.fromEntries(Object.entries(roles).map(([r, a]) => [r === from ? to : r, a]));
  const prompts = { ...(draft.systemPrompts ?? {}) };
  if (from in prompts) {
    prompts[to] = prompts[from];
    delete prompts[from];
  }
  return { ...withRoles(draft, next), systemPrompts: prompts };
}

/** A name for a new role that is not taken yet. */
export function newRoleName(draft: Draft): string {
  const roles = rolesOf(draft) ?? {};
  let k = Object.keys(roles).length + 1;
  while (`role${k}` in roles) k += 1;
  return `role${k}`;
}
