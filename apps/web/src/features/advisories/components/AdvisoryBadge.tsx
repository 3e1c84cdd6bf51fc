import type { RunAdvisorySummary } from "@troupe/contracts";
import { ADVISORY_TITLES } from "../lib/labels";

/** A run's advisories in a table cell: how many and the worst severity; the kinds on hover. */
export function AdvisoryBadge({ summary }: { summary: RunAdvisorySummary | undefined }) {
  if (!summary) return null;
  const kinds = summary.kinds.map((k) => ADVISORY_TITLES[k]).join(", ");
  return (
    <span
      className={`badge badge-advisory-${summary.worst}`}
      title={`${summary.count} health ${summary.count === 1 ? "advisory" : "advisories"}: ${kinds}`}
      data-testid="advisory-badge"
      data-severity={summary.worst}
      style={{ marginLeft: "0.4rem" }}
    >
      ⚠ {summary.count}
    </span>
  );
}
