import { AdvisoryEvent, atLeastSeverity, severityRank, toRunAdvisory, type AdvisorySeverity, type RunAdvisory, type RunAdvisorySummary } from "@troupe/contracts";
import type { Db } from "../../../server/db";

/**
 * A run's health advisories: the runtime's `advisory` events (troupe/advisories), read back from the
 * stored event log. A run raises few (one per condition as it starts), so they are read whole.
 */

/** More than any run raises in practice (ten kinds per actor, each once per episode of trouble). */
const MAX_ADVISORIES = 2000;

export interface AdvisoryFilter {
  severity?: AdvisorySeverity;
  actor?: string;
}

export async function listAdvisories(db: Db, runId: string, filter: AdvisoryFilter = {}): Promise<RunAdvisory[]> {
  const rows = await db.runEvent.findMany({
    where: { runId, type: "advisory" },
    orderBy: { seq: "asc" },
    select: { payload: true },
    take: MAX_ADVISORIES,
  });
  return rows
    .flatMap((r) => {
      const parsed = AdvisoryEvent.safeParse(r.payload);
      return parsed.success ? [toRunAdvisory(parsed.data)] : [];
    })
    .filter((a) => (filter.severity === undefined || atLeastSeverity(a.severity, filter.severity)) && (filter.actor === undefined || a.actor === filter.actor));
}

export function worstOf(advisories: readonly { severity: AdvisorySeverity }[]): AdvisorySeverity | null {
  let worst: AdvisorySeverity | null = null;
  for (const a of advisories) if (worst === null || severityRank(a.severity) > severityRank(worst)) worst = a.severity;
  return worst;
}

/** Per run of a table page: the count, the worst severity and the kinds (runs without any are left out). */
export async function advisorySummaries(db: Db, runIds: string[]): Promise<RunAdvisorySummary[]> {
  if (runIds.length === 0) return [];
  const rows = await db.runEvent.findMany({
    where: { runId: { in: runIds }, type: "advisory" },
    orderBy: [{ runId: "asc" }, { seq: "asc" }],
    select: { runId: true, payload: true },
    take: MAX_ADVISORIES * 10,
  });
  const byRun = new Map<string, RunAdvisory[]>();
  for (const r of rows) {
    const parsed = AdvisoryEvent.safeParse(r.payload);
    if (!parsed.success) continue;
    const list = byRun.get(r.runId) ?? [];
    list.push(toRunAdvisory(parsed.data));
    byRun.set(r.runId, list);
  }
  return [...byRun].map(([runId, list]) => ({
    runId,
    count: list.length,
    worst: worstOf(list) ?? "info",
    kinds: [...new Set(list.map((a) => a.kind))],
  }));
}
