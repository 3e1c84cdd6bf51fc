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

export function launchIssuesOf(spec: RunSpec): LaunchIssue[] {
  const issues: LaunchIssue[] = [];
  spec.environments.forEach((env, i) => {
    if (!env.roundSpec) return;
    for (const e of checkRoundSpec(env.roundSpec, { actors: env.actors, maxTurns: env.maxTurns }).errors) {
      issues.push({ path: `environments.${i}.roundSpec`, message: `line ${e.line}, column ${e.column}: ${e.message}`, line: e.line, column: e.column });
    }
  });
  spec.rewards.forEach((reward, i) => {
    if (reward.source.kind !== "python") return;
    const { code, entrypoint } = reward.source;
    const syntax = pythonSyntaxIssues(code);
    for (const e of syntax) {
      issues.push({ path: `rewards.${i}.source.code`, message: `line ${e.line}, column ${e.column}: ${e.message}`, line: e.line, column: e.column });
    }
    if (syntax.length === 0 && !definesTopLevel(code, entrypoint)) {
      issues.push({ path: `rewards.${i}.source.entrypoint`, message: `the code defines no top-level \`${entrypoint}\` (def ${entrypoint}(…)) to call` });
    }
  });
  return issues;
}

/** Schema first (a spec that does not parse has nothing else worth checking), then the rest. */
export function checkLaunch(input: unknown): { spec: RunSpec; issues: [] } | { spec: null; issues: LaunchIssue[] } {
  const parsed = RunSpec.safeParse(input);
  if (!parsed.success) return { spec: null, issues: fieldIssues(parsed.error) };
  const issues = launchIssuesOf(parsed.data);
  return issues.length === 0 ? { spec: parsed.data, issues: [] } : { spec: null, issues };
}
