"use client";

import { newRoleActor, newRoleName, playsRoles, renamedRole, rolesOf, withRole, withRolesOn, withoutRole } from "../lib/roles";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Draft = Record<string, any>;

/**
 * `environments[].roles`: role name -> actor, for the kinds whose turns or seats are named (round specs, games).
 * One actor in two roles is one policy in both (self-play: X and O are one model, one update); the round spec and
 * the system prompts then name the roles. Shown only for those kinds; `issues` are keyed relative to the environment.
 */
export function RolesFields(props: { kind: string; draft: Draft; setDraft(next: Draft): void; issues: Record<string, string>; actorNames: string[] }) {
  const { kind, draft, setDraft, issues } = props;
  if (!playsRoles(kind)) return null;
  const roles = rolesOf(draft);
  const choices = [...new Set([...props.actorNames, ...Object.values(roles ?? {})])];
  return (
    <fieldset data-testid="roles-fields">
      <legend>Roles</legend>
      <label className="form-field checkbox">
        <input type="checkbox" checked={roles !== undefined} onChange={(e) => setDraft(withRolesOn(draft, e.target.checked))} data-testid="roles-on" />
        Name roles
        <span className="hint">
          The round spec and the game&apos;s seats name roles, each played by an actor. One actor in two roles is one policy in both (one
          set of weights, one update over both roles&apos; turns): self-play is X and O played by the same actor. Metrics
          (role/&lt;role&gt;/…) and transcripts keep the roles apart.
        </span>
      </label>
      {roles !== undefined && (
        <div className="form-field" role="group" aria-label="Roles and their actors">
          {Object.entries(roles).map(([role, actor], k) => (
            <div key={k} className="form-field checkbox" data-testid={`role-row-${k}`}>
              <input
                type="text"
                aria-label={`Name of role ${k + 1}`}
                value={role}
                onChange={(e) => {
                  const next = renamedRole(draft, role, e.target.value);
                  if (next) setDraft(next);
                }}
                aria-invalid={issues[`roles.${role}`] ? true : undefined}
              />
              <select aria-label={`Actor playing ${role}`} value={actor} onChange={(e) => setDraft(withRole(draft, role, e.target.value))}>
                <option value="">— choose —</option>
                {choices.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
              <button type="button" className="secondary small" onClick={() => setDraft(withoutRole(draft, role))} aria-label={`Remove role ${role}`}>
                Remove
              </button>
              {issues[`roles.${role}`] && (
                <span className="field-error" role="alert" data-testid={`error-roles.${role}`}>
                  {issues[`roles.${role}`]}
                </span>
              )}
            </div>
          ))}
          <button type="button" className="secondary small" onClick={() => setDraft(withRole(draft, newRoleName(draft), newRoleActor(draft, props.actorNames)))} data-testid="role-add">
            Add role
          </button>
        </div>
      )}
      {issues.roles && (
        <span className="field-error" role="alert" data-testid="error-roles">
          {issues.roles}
        </span>
      )}
    </fieldset>
  );
}
