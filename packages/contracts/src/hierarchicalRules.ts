/**
 * Rules of `algorithm.advantage: "hierarchical"` (a proposer writes a task, the solver answers it solverSamples
 * times). RunSpec's superRefine runs them; the runtime mirrors them in
 * gpu-runtime/src/troupe/spec/hierarchical_rules.py, and both run the cases of
 * gpu-runtime/tests/fixtures/hierarchical_rules.cases.json, so every launch path refuses the same field.
 */
import type { ActorRuleIssue } from "./actorRules";
import { ROLE_EXCHANGE_ALGORITHMS } from "./algorithms";

/** The kind whose round spec plays the proposer, then the solver who reads the proposal. */
const HIERARCHICAL_KIND = "collaborative";

/** The fields the rules read (RunSpec's output, defaults filled). */
export interface HierarchicalRuleInput {
  environments: { kind: string; roles?: Record<string, string>; roundSpec?: string }[];
  algorithm: { name: string; advantage: string; groupSize: number; hierarchical: { proposer: string; solver: string; solverSamples: number } };
}

/** The round a proposer–solver environment plays: the proposal, then one answer to it. */
export function hierarchicalRound(proposer: string, solver: string): string {
  return `${proposer} -> ${solver}`;
}

export function hierarchicalIssues(spec: HierarchicalRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const algorithm = spec.algorithm;
  if (algorithm.advantage !== "hierarchical") return issues;
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  const { proposer, solver, solverSamples } = algorithm.hierarchical;
  if ((ROLE_EXCHANGE_ALGORITHMS as readonly string[]).includes(algorithm.name)) {
    add(["algorithm", "advantage"], `${algorithm.name} trains both roles on their summed reward; hierarchical pays the proposer from the solver's answers: use grpo (or gspo, dr_grpo, dapo)`);
  }
  if (proposer === solver) {
    add(["algorithm", "hierarchical", "solver"], `the solver is "${solver}", the proposer's role too: name two different roles`);
    return issues;
  }
  if (algorithm.groupSize % solverSamples !== 0 || algorithm.groupSize / solverSamples < 2) {
    add(["algorithm", "groupSize"], `each row's ${algorithm.groupSize} episodes are proposals answered ${solverSamples} times each (solverSamples): make groupSize a multiple of ${solverSamples} with at least 2 proposals, e.g. ${2 * solverSamples}`);
  }
  const round = hierarchicalRound(proposer, solver);
  let paired = 0;
  spec.environments.forEach((env, i) => {
    if (env.roles === undefined) return;
    const at = (path: (string | number)[], message: string) => add(["environments", i, ...path], message);
    const has = [proposer, solver].filter((r) => r in env.roles!);
    if (has.length === 0) return;
    if (has.length === 1) {
      const missing = has[0] === proposer ? solver : proposer;
      at(["roles"], `"${has[0]}" is here but "${missing}" is not: hierarchical plays both roles in one environment; map "${missing}" to an actor`);
      return;
    }
    paired += 1;
    if (env.kind !== HIERARCHICAL_KIND) {
      at(["kind"], `the solver answers the proposal in one conversation: use a ${HIERARCHICAL_KIND} environment, not ${env.kind}`);
    }
    // Without a roundSpec the environment's own rules refuse it already.
    if (env.roundSpec !== undefined && env.roundSpec.replace(/\s+/g, " ").trim() !== round) {
      at(["roundSpec"], `hierarchical plays "${round}" (the proposer writes the task once, each solver answers it): set roundSpec to that`);
    }
  });
  if (paired === 0 && !issues.some((i) => i.path[0] === "environments")) {
    add(["environments"], `hierarchical needs an environment whose roles are "${proposer}" and "${solver}" (environments[].roles), with roundSpec "${round}"`);
  }
  return issues;
}
