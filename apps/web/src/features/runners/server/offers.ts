import { runnerOffer, type FieldIssue, type RunnerOffer } from "@troupe/contracts";
import { launchIssuesAgainst } from "../lib/launchIssues";
import type { Db } from "../../../server/db";

export interface RunnerRow extends RunnerOffer {
  host: string;
  cpuCount: number;
  memoryBytes: number;
  startedAt: Date;
  probeError: string | null;
}

/**
 * Every Runner row, parsed (a row whose JSON does not parse is shown without capabilities, never trusted),
 * with how many runs each is running now. Small: one row per runner host.
 */
export async function loadRunners(db: Db): Promise<RunnerRow[]> {
  const [rows, running] = await Promise.all([
    db.runner.findMany({ orderBy: { id: "asc" } }),
    db.run.groupBy({ by: ["runnerId"], where: { status: { in: ["running", "paused"] }, runnerId: { not: null } }, _count: { _all: true } }),
  ]);
  const counts = new Map(running.map((r) => [r.runnerId, r._count._all]));
  return rows.map((row) => {
    const { capabilitiesMalformed, ...offer } = runnerOffer(row, counts.get(row.id) ?? 0);
    return {
      ...offer,
      cpuCount: row.cpuCount,
      memoryBytes: row.memoryBytes,
      startedAt: row.startedAt,
      probeError: row.probeError ?? (capabilitiesMalformed ? "capabilities in an unexpected shape" : null),
    };
  });
}

/** The launch check against the live runners (see launchIssuesAgainst; the composer runs the same one). */
export async function runnerLaunchIssues(db: Db, spec: unknown, claimedGpus = 0): Promise<FieldIssue[]> {
  return launchIssuesAgainst(spec, await loadRunners(db), claimedGpus);
}
