/**
 * Evaluation rules: eval-only environments (`environments[].evalOnly`) and eval-only runs
 * (`trainer.steps: 0`). RunSpec's superRefine runs them, and the runtime mirrors them in
 * gpu-runtime/src/troupe/spec/eval_rules.py (tests/test_eval_rules.py runs the same cases as
 * packages/contracts/test/evalRules.test.ts), so every launch path refuses the same field.
 */
import type { ActorRuleIssue } from "./actorRules";

/** The fields the rules read (RunSpec's output, defaults filled). */
export interface EvalRuleInput {
  datasets: { name: string; evalFraction: number }[];
  environments: { name: string; dataset: string; evalOnly?: boolean }[];
  trainer: { steps: number; evalEvery: number };
}

export function evalIssues(spec: EvalRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  const { steps, evalEvery } = spec.trainer;
  const fraction = new Map(spec.datasets.map((d) => [d.name, d.evalFraction]));
  const trained = spec.environments.filter((e) => !e.evalOnly);
  if (steps > 0 && trained.length === 0) {
    add(["environments"], "every environment is evalOnly, so nothing would train: set trainer.steps to 0 for an eval-only run, or train on one of them");
  }
  spec.environments.forEach((env, i) => {
    if (env.evalOnly) {
      if (steps > 0 && evalEvery === 0) {
        add(["environments", i, "evalOnly"], "an eval-only environment is evaluated every trainer.evalEvery steps, and trainer.evalEvery is 0: set it (e.g. 10)");
      }
      const sharing = trained.find((t) => t.dataset === env.dataset);
      if (sharing) {
        add(
          ["environments", i, "dataset"],
          `dataset "${env.dataset}" is trained on by environment "${sharing.name}"; an eval-only environment evaluates every row of its dataset, so give it a dataset of its own`,
        );
      }
    } else if (steps === 0 && (fraction.get(env.dataset) ?? 0) === 0) {
      add(
        ["environments", i, "evalOnly"],
        `trainer.steps is 0 (an eval-only run evaluates every environment once), and dataset "${env.dataset}" holds out no rows (evalFraction 0): mark this environment evalOnly to evaluate all its rows, or give the dataset an evalFraction`,
      );
    }
  });
  return issues;
}
