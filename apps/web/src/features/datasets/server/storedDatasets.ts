import type { RunSpec } from "@troupe/contracts";
import { badRequest } from "../../../server/api/trpc";
import type { Db } from "../../../server/db";
import { datasetLaunchIssues } from "./datasetLaunchIssues";

/**
 * A launch whose datasets make it certain to fail (a stored dataset that no longer exists or has
 * another format, a `prompt.field` naming no column) is refused at the field before a run is
 * created: otherwise it would only fail later, on the runner. See datasetLaunchIssues.
 */
export async function assertStoredDatasetsExist(db: Db, spec: RunSpec): Promise<void> {
  const issues = await datasetLaunchIssues(db, spec);
  if (issues.length > 0) throw badRequest(issues, "invalid spec");
}
