import { BUILTIN_DATASET_COLUMNS, type FieldIssue, type RunSpec } from "@troupe/contracts";
import type { Db } from "../../../server/db";

/**
 * What a launch's datasets make certain to fail, found before a run is queued, by field. The one
 * check every launch path runs (the UI's launch and re-run through createQueuedRun, the REST API
 * in its handler), so no path queues what another refuses:
 * - a stored dataset (`source.kind: "stored"`) that no longer exists, or whose stored format
 *   differs from the spec's;
 * - an environment whose `prompt.field` names no column of its dataset, where the columns are
 *   known here (uploaded datasets, the builtin toy sets). The runtime refuses the same at start
 *   (environments.py, collaborative.py, acting_build.py), after the run had waited in the queue.
 *   Files and Hugging Face datasets are read only on the runner; the runtime checks those.
 */

/** Environment kinds that read no prompt column (the runtime skips the check for them too). */
const NO_PROMPT_COLUMN = new Set(["python", "game", "remote"]);

export async function datasetLaunchIssues(db: Db, spec: RunSpec): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  const storedIds = [...new Set(spec.datasets.flatMap((d) => (d.source.kind === "stored" ? [d.source.datasetId] : [])))];
  const rows = storedIds.length
    ? await db.dataset.findMany({ where: { id: { in: storedIds }, kind: "upload" }, select: { id: true, format: true, columns: true } })
    : [];
  const byId = new Map(rows.map((r) => [r.id, r]));

  /** Columns of each dataset by name, where known here. */
  const columns = new Map<string, readonly string[]>();
  spec.datasets.forEach((d, i) => {
    if (d.source.kind === "builtin") {
      const known = BUILTIN_DATASET_COLUMNS[d.source.name];
      if (known) columns.set(d.name, known);
    } else if (d.source.kind === "stored") {
      const row = byId.get(d.source.datasetId);
      if (!row) {
        issues.push({ path: `datasets.${i}.source.datasetId`, message: `no uploaded dataset has id "${d.source.datasetId}" (deleted?)` });
      } else if (row.format !== d.source.format) {
        issues.push({ path: `datasets.${i}.source.format`, message: `the stored file is ${row.format}, not ${d.source.format}` });
      } else {
        columns.set(d.name, row.columns as string[]);
      }
    }
  });

  spec.environments.forEach((env, i) => {
    if (env.prompt.template !== undefined || NO_PROMPT_COLUMN.has(env.kind)) return;
    const known = columns.get(env.dataset);
    if (known && !known.includes(env.prompt.field)) {
      issues.push({
        path: `environments.${i}.prompt.field`,
        message: `dataset "${env.dataset}" has no column "${env.prompt.field}" (columns: ${[...known].sort().join(", ")})`,
      });
    }
  });
  return issues;
}
