import { z } from "zod";

/**
 * Eval results of a run, per environment and actor, from the runtime's metric names (gpu-runtime
 * evaluation.py): `eval/<environment>/reward/mean`, `.../reward/std`, `.../reward/<component>`,
 * `.../completion_len`, `.../samples`, reported at each evaluation's step (0 in an eval-only run).
 */
export const EvalResultRow = z.object({
  environment: z.string(),
  actor: z.string(),
  /** The step of the latest evaluation of this environment and actor. */
  step: z.number().int(),
  /** Metric name below `eval/<environment>/` (`reward/mean`, `samples`, …) → value at `step`. */
  values: z.record(z.string(), z.number()),
});
export type EvalResultRow = z.infer<typeof EvalResultRow>;

export const RunEvalResultsOutput = z.object({
  /** The spec's environments in spec order, then actors by name; only those evaluated. */
  rows: z.array(EvalResultRow),
  /** True when the run trains nothing (`trainer.steps: 0`): an eval-only run. */
  evalOnlyRun: z.boolean(),
});
export type RunEvalResultsOutput = z.infer<typeof RunEvalResultsOutput>;

export interface LatestEvalPoint {
  name: string;
  actor: string;
  step: number;
  value: number;
}

/**
 * The latest value of each `eval/<environment>/…` series, grouped by environment and actor. Environment names
 * come from the spec: `eval/reward/mean` (over all of an actor's environments) is not an environment's.
 * Only the latest evaluation's step of a group is kept (a component missing there is not carried over).
 */
export function groupEvalResults(points: readonly LatestEvalPoint[], environments: readonly string[]): EvalResultRow[] {
  const groups = new Map<string, EvalResultRow>();
  // Longest names first: "a.b" is matched before "a" would take `eval/a.b/…`'s prefix (names hold no "/").
  const byLength = [...environments].sort((a, b) => b.length - a.length);
  for (const p of points) {
    const environment = byLength.find((e) => p.name.startsWith(`eval/${e}/`));
    if (environment === undefined) continue;
    const key = `${environment}\u0000${p.actor}`;
    const metric = p.name.slice(`eval/${environment}/`.length);
    const row = groups.get(key);
    if (!row || p.step > row.step) groups.set(key, { environment, actor: p.actor, step: p.step, values: { [metric]: p.value } });
    else if (p.step === row.step) row.values[metric] = p.value;
  }
  const order = new Map(environments.map((e, i) => [e, i]));
  return [...groups.values()].sort((a, b) => order.get(a.environment)! - order.get(b.environment)! || a.actor.localeCompare(b.actor));
}
