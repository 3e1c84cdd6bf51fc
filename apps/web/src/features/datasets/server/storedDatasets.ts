import type { RunSpec } from "@troupe/contracts";
import type { FieldIssue } from "@troupe/contracts";
import { badRequest } from "../../../server/api/trpc";
import type { Db } from "../../../server/db";

/**
 * A launch whose spec names an uploaded dataset (`source.kind: "stored"`) that no longer exists, or
 * whose format disagrees with the stored file, is refused at the field before a run is created:
 * otherwise it would only fail later, on the runner.
 */
export async function assertStoredDatasetsExist(db: Db, spec: RunSpec): Promise<void> {
  const stored = spec.datasets.flatMap((d, i) => (d.source.kind === "stored" ? [{ i, id: d.source.datasetId, format: d.source.format }] : []));
  if (stored.length === 0) return;
  const rows = await db.dataset.findMany({ where: { id: { in: stored.map((s) => s.id) }, kind: "upload" }, select: { id: true, format: true } });
  const byId = new Map(rows.map((r) => [r.id, r.format]));
  const issues: FieldIssue[] = [];
  for (const s of stored) {
    const format = byId.get(s.id);
    if (format === undefined) issues.push({ path: `datasets.${s.i}.source.datasetId`, message: `no uploaded dataset has id "${s.id}" (deleted?)` });
    else if (format !== s.format) issues.push({ path: `datasets.${s.i}.source.format`, message: `the stored file is ${format}, not ${s.format}` });
  }
  if (issues.length > 0) throw badRequest(issues, "invalid spec");
}
