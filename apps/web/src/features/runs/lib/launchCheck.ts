import { fieldIssues, RunSpec, type FieldIssue } from "@troupe/contracts";
import { check as checkRoundSpec } from "@troupe/dsl";
import { definesTopLevel, pythonSyntaxIssues } from "./pythonSyntax";

/**
 * The one check every launch runs before a run is queued: the UI's launch and re-run, the REST
 * API (and so the CLI), and the composer's live validation. A spec that passes can still fail at
 * run time (a model that does not fit, a reward that raises), but never for a reason that could be
 * seen from the spec alone:
 *   - the RunSpec schema, with its cross-references (actors, datasets and rewards that exist) and
 *     the runtime's support rules in contracts;
 *   - each environment's round spec against the dsl grammar and the environment's actors;
 *   - each Python reward's syntax, and that it defines its entrypoint.
 * Issues name the field by its dotted path (`environments.0.roundSpec`); positions inside a round
 * spec or a reward's code are given as line and column.
 */
export interface LaunchIssue extends FieldIssue {
  line?: number;
  column?: number;
}

type EnvironmentLike = Pick<RunSpec["environments"][number], "roundSpec" | "actors" | "maxTurns"> & { roles?: Record<string, string> };
type RewardLike = Pick<RunSpec["rewards"][number], "source">;

/** A round spec against the dsl and its environment's actors; paths relative to the environment. */
export function roundSpecIssues(env: EnvironmentLike): LaunchIssue[] {
  if (!env.roundSpec) return [];
  // With `roles` the round spec names roles (each played by an actor), as the runtime reads it (envs/roles.py).
  return checkRoundSpec(env.roundSpec, { actors: env.roles ? Object.keys(env.roles) : env.actors, maxTurns: env.maxTurns }).errors.map((e) => ({
    path: "roundSpec",
    message: `line ${e.line}, column ${e.column}: ${e.message}`,
    line: e.line,
    column: e.column,
  }));
}

/** A Python reward's syntax and entrypoint; paths relative to the reward. Builtins have none. */
export function rewardCodeIssues(reward: RewardLike): LaunchIssue[] {
  if (reward.source.kind !== "python") return [];
  const { code, entrypoint } = reward.source;
  const syntax = pythonSyntaxIssues(code).map((e) => ({
    path: "source.code",
    message: `line ${e.line}, column ${e.column}: ${e.message}`,
    line: e.line,
    column: e.column,
  }));
  if (syntax.length > 0) return syntax;
  if (!definesTopLevel(code, entrypoint)) {
    return [{ path: "source.entrypoint", message: `the code defines no top-level \`${entrypoint}\` (def ${entrypoint}(…)) to call` }];
  }
  return [];
}

export function launchIssuesOf(spec: RunSpec): LaunchIssue[] {
  return [
    ...spec.environments.flatMap((env, i) => roundSpecIssues(env).map((issue) => ({ ...issue, path: `environments.${i}.${issue.path}` }))),
    ...spec.rewards.flatMap((reward, i) => rewardCodeIssues(reward).map((issue) => ({ ...issue, path: `rewards.${i}.${issue.path}` }))),
  ];
}

/** Schema first (a spec that does not parse has nothing else worth checking), then the rest. */
export function checkLaunch(input: unknown): { spec: RunSpec; issues: [] } | { spec: null; issues: LaunchIssue[] } {
  const parsed = RunSpec.safeParse(input);
  if (!parsed.success) return { spec: null, issues: fieldIssues(parsed.error) };
  const issues = launchIssuesOf(parsed.data);
  return issues.length === 0 ? { spec: parsed.data, issues: [] } : { spec: null, issues };
}
