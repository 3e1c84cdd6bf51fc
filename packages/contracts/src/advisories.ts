import { z } from "zod";
import { AdvisoryEvidence, AdvisoryKind, AdvisorySeverity, ADVISORY_SEVERITIES, type AdvisoryEvent } from "./events";
import { IsoTimestamp } from "./runViews";

/**
 * Health advisories as the web pages, the REST API (`GET /runs/{id}/advisories`) and `troupe wait
 * --fail-on-advisory` read them: the runtime's `advisory` events (events.ts), with their seq.
 */

/** `info` < `warning` < `critical`. */
export const severityRank = (s: AdvisorySeverity): number => ADVISORY_SEVERITIES.indexOf(s);
export const atLeastSeverity = (s: AdvisorySeverity, floor: AdvisorySeverity): boolean => severityRank(s) >= severityRank(floor);

const advisoryShape = <T extends z.ZodType>(ts: T) =>
  z.object({
    seq: z.number().int(),
    ts,
    step: z.number().int().min(0),
    actor: z.string().nullable().describe("The actor it is about; null for a run-wide advisory"),
    kind: AdvisoryKind,
    severity: AdvisorySeverity,
    evidence: AdvisoryEvidence,
    hint: z.string(),
  });

/** On the run page (tRPC: dates as Date). */
export const RunAdvisory = advisoryShape(z.date());
export type RunAdvisory = z.infer<typeof RunAdvisory>;

export const toRunAdvisory = (e: AdvisoryEvent): RunAdvisory => ({
  seq: e.seq,
  ts: new Date(e.ts),
  step: e.step,
  actor: e.actor ?? null,
  kind: e.kind,
  severity: e.severity,
  evidence: e.evidence,
  hint: e.hint,
});

export const ApiAdvisory = advisoryShape(IsoTimestamp);
export type ApiAdvisory = z.infer<typeof ApiAdvisory>;

export const ApiAdvisoriesQuery = z
  .object({
    severity: AdvisorySeverity.optional().describe("Only advisories of at least this severity (info < warning < critical)"),
    actor: z.string().min(1).max(64).optional().describe("Only advisories about this actor"),
  })
  .strict();
export type ApiAdvisoriesQuery = z.infer<typeof ApiAdvisoriesQuery>;

export const ApiAdvisoryList = z.object({
  items: z.array(ApiAdvisory).describe("In the order the runtime raised them"),
  /** The most severe advisory's severity, or null when there is none. */
  worst: AdvisorySeverity.nullable(),
});
export type ApiAdvisoryList = z.infer<typeof ApiAdvisoryList>;

/** Per run in a table: how many advisories, and the worst. */
export const RunAdvisorySummary = z.object({ runId: z.string(), count: z.number().int(), worst: AdvisorySeverity, kinds: z.array(AdvisoryKind) });
export type RunAdvisorySummary = z.infer<typeof RunAdvisorySummary>;
