import type { Db } from "../../../server/db";
import { groupEvalResults, type LatestEvalPoint, type RunEvalResultsOutput } from "../lib/evalResults";
import { specNames } from "../lib/specNames";
import { totalStepsOf } from "./summaries";

/** The latest eval values of a run per environment and actor (see lib/evalResults.ts). */
export async function loadEvalResults(db: Db, runId: string, spec: unknown): Promise<RunEvalResultsOutput> {
  // The newest point of every `eval/…` series: (runId, name, actor, step) is MetricPoint's key, so each series
  // is one backward index scan; eval points are few (one per evaluation).
  const points = await db.$queryRaw<LatestEvalPoint[]>`
    SELECT DISTINCT ON (name, actor) name, actor, step, value
    FROM "MetricPoint"
    WHERE "runId" = ${runId} AND name LIKE 'eval/%'
    ORDER BY name, actor, step DESC`;
  const rows = groupEvalResults(
    points.map((p) => ({ name: p.name, actor: p.actor, step: Number(p.step), value: Number(p.value) })),
    specNames(spec).environments,
  );
  return { rows, evalOnlyRun: totalStepsOf(spec) === 0 };
}
