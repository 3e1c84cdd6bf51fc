/**
 * Rules of the offline learners (`algorithm.name` "sft", "dpo"): they train on dataset rows (supervised
 * completions, preference pairs) instead of sampled episodes. RunSpec's superRefine runs them; the runtime
 * mirrors them in gpu-runtime/src/troupe/spec/learner_rules.py, and both test the cases of
 * gpu-runtime/tests/fixtures/learner_rules.cases.json, so every launch path refuses the same field.
 */
import type { ActorRuleIssue } from "./actorRules";
import { OFFLINE_FAMILY } from "./algorithms";

export const OFFLINE_ALGORITHMS: readonly string[] = OFFLINE_FAMILY;

/** Columns of the builtin toy datasets (data.py generates them), so a missing target is caught before queueing. */
export const BUILTIN_DATASET_COLUMNS: Record<string, readonly string[]> = {
  echo_letter: ["prompt", "letter"],
  reverse_word: ["prompt", "word", "answer"],
};

/** The fields the rules read (RunSpec's output, defaults filled). */
export interface LearnerRuleInput {
  actors: { name: string; backend: string; training: { klBeta: number } }[];
  datasets: { name: string; source: { kind: string; name?: string } }[];
  environments: {
    kind: string;
    dataset: string;
    actors: string[];
    completionField?: string;
    chosenField?: string;
    rejectedField?: string;
    evalOnly?: boolean;
  }[];
  algorithm: {
    name: string;
    dpoLoss: string;
    labelSmoothing: number;
    dynamicSampling: { enabled: boolean };
    async?: unknown;
    importanceCorrection?: unknown;
    entropyCoef?: number;
  };
}

export function learnerIssues(spec: LearnerRuleInput): ActorRuleIssue[] {
  const issues: ActorRuleIssue[] = [];
  const add = (path: (string | number)[], message: string) => issues.push({ path, message });
  const name = spec.algorithm.name;
  const offline = OFFLINE_ALGORITHMS.includes(name);
  spec.environments.forEach((env, i) => {
    if (env.completionField !== undefined && name !== "sft") {
      add(["environments", i, "completionField"], `read only when algorithm.name is "sft" (it is "${name}")`);
    }
    for (const field of ["chosenField", "rejectedField"] as const) {
      if (env[field] !== undefined && name !== "dpo") add(["environments", i, field], `read only when algorithm.name is "dpo" (it is "${name}")`);
    }
    if (!offline) return;
    if (env.kind !== "single_turn") {
      add(["environments", i, "kind"], `${name} trains on dataset rows, one actor per row: only single_turn environments (a ${env.kind} environment samples episodes)`);
      return;
    }
    const actor = spec.actors.find((a) => a.name === env.actors[0]);
    if (actor?.backend === "openai") {
      add(["environments", i, "actors", 0], `${name} updates the environment's actor, and "${actor.name}" is an API actor (behind an OpenAI-compatible endpoint, its weights are not on the runner)`);
    }
    if (env.evalOnly) return; // evaluated (sampled and scored), never trained on: no target column needed
    const dataset = spec.datasets.find((d) => d.name === env.dataset);
    const columns = dataset?.source.kind === "builtin" ? BUILTIN_DATASET_COLUMNS[dataset.source.name ?? ""] : undefined;
    if (!columns) return; // files and uploads: the runtime checks the columns when it loads the rows
    const targets: [string, string][] =
      name === "sft" ? [["completionField", env.completionField ?? "completion"]] : [["chosenField", env.chosenField ?? "chosen"], ["rejectedField", env.rejectedField ?? "rejected"]];
    const missing = targets.filter(([, column]) => !columns.includes(column));
    if (name === "dpo" && missing.length > 0) {
      add(
        ["environments", i, "dataset"],
        `dpo trains on preference pairs (columns "${targets[0]![1]}" and "${targets[1]![1]}"), and builtin dataset "${dataset!.source.name}" is not a preference dataset (columns: ${columns.join(", ")})`,
      );
    } else if (missing.length > 0) {
      add(["environments", i, "completionField"], `builtin dataset "${dataset!.source.name}" has no column "${missing[0]![1]}" (columns: ${columns.join(", ")})`);
    }
  });
  if (spec.algorithm.labelSmoothing > 0 && !(name === "dpo" && spec.algorithm.dpoLoss === "robust")) {
    add(["algorithm", "labelSmoothing"], 'read only by dpoLoss "robust" (algorithm.name "dpo")');
  }
  if (!offline) return issues;
  const sampling = `${name} trains on dataset rows and samples nothing`;
  if (spec.algorithm.dynamicSampling.enabled) add(["algorithm", "dynamicSampling", "enabled"], `${sampling}: dynamic sampling has no groups to resample`);
  if (spec.algorithm.async !== undefined) add(["algorithm", "async"], `${sampling}: there are no rollouts to run ahead`);
  if (spec.algorithm.importanceCorrection !== undefined) add(["algorithm", "importanceCorrection"], `${sampling}: there is no sampler to correct for`);
  if (spec.algorithm.entropyCoef !== undefined) add(["algorithm", "entropyCoef"], `${sampling}: the entropy bonus keeps a sampling policy exploring, and ${name}'s loss has none`);
  spec.actors.forEach((actor, i) => {
    if (actor.training.klBeta > 0) {
      add(
        ["actors", i, "training", "klBeta"],
        name === "sft" ? "sft has no KL term: set klBeta to 0" : "dpo's distance to its reference is algorithm.beta: set klBeta to 0",
      );
    }
  });
  return issues;
}
