import { describeRunner, storedGpuClaim, mostGpus, offeredRunners, runnerIssues, runnerOffer, type FieldIssue, type RunnerOffer } from "@troupe/contracts";
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

/**
 * The launch check against the live runners (contracts `runnerIssues`): the spec's demands (vLLM, DeepSpeed,
 * GPUs, Ray, bf16, …) against what each live runner reported. With no live runner that reported its
 * capabilities, nothing is refused (the run waits, and says so); see runnerIssues.
 */
export async function runnerLaunchIssues(db: Db, spec: unknown, claimedGpus = 0): Promise<FieldIssue[]> {
  const runners = await loadRunners(db);
  const issues = runnerIssues(spec, runners);
  // The GPUs the launch claims (the launch form's "GPUs" may ask for more than the placement uses).
  const offered = offeredRunners(runners);
  const most = mostGpus(runners);
  // An unplaced "auto" run takes at most what a runner has (gpuClaim.ts): only a fixed claim can be too big.
  const fixed = storedGpuClaim(spec, claimedGpus).kind !== "auto";
  if (issues.length === 0 && offered.length > 0 && fixed && claimedGpus > most) {
    issues.push({ path: "gpus", message: `claims ${claimedGpus} GPUs, but the largest live runner has ${most}; runners: ${offered.map(describeRunner).join(", ")}` });
  }
  return issues;
}
