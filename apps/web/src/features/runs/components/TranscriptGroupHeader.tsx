import { formatMetric } from "../../../lib/format";
import { groupStats, type GroupId, type TranscriptGroup } from "../lib/transcriptGroups";

const signed = (v: number) => (v > 0 ? `+${formatMetric(v)}` : formatMetric(v));

/** The group's reward mean ± std over its samples, and why every advantage is 0 when the group agrees. */
function summaryText(group: TranscriptGroup, compact: boolean): { stats: string; same: string | null } {
  const { n, mean, std } = groupStats(group.samples.map((s) => s.reward));
  const stats = compact
    ? `reward ${formatMetric(mean)} ± ${formatMetric(std)} (${n} sample${n === 1 ? "" : "s"})`
    : `reward mean ${formatMetric(mean)} ± ${formatMetric(std)} over ${n} sample${n === 1 ? "" : "s"}`;
  const same = n > 1 && std === 0 ? (compact ? "all equal: adv 0" : "all scored the same: advantage 0") : null;
  return { stats, same };
}

export function GroupSummary({ group, compact = false }: { group: TranscriptGroup; compact?: boolean }) {
  const { stats, same } = summaryText(group, compact);
  return (
    <span data-testid="group-stats">
      {stats}
      {same && <span className="muted"> · {same}</span>}
    </span>
  );
}

/**
 * A GRPO group's header row in the transcript list: the group's reward mean and std and every sample's
 * reward and advantage (those a filter left out too), so each row's "reward · adv" reads against it.
 */
export function TranscriptGroupHeader({ id, group, height }: { id: GroupId; group: TranscriptGroup | null; height: number }) {
  return (
    <div
      className="vrow vgroup"
      style={{ height }}
      data-testid="transcript-group"
      data-group={`${id.step}/${id.environment}/${id.group}`}
      title={group ? `step ${id.step} · ${id.environment} · group ${id.group}: ${Object.values(summaryText(group, false)).filter(Boolean).join(" · ")}` : undefined}
    >
      <div className="line1">
        <b>step {id.step}</b> · {id.environment} · group {id.group} · {group ? <GroupSummary group={group} compact /> : <span className="muted">loading…</span>}
      </div>
      <div className="line2">
        {group?.samples.map((s) => (
          <span key={s.seq} className="group-sample" data-testid="group-sample" data-sample={s.sample} data-reward={s.reward} data-advantage={s.advantage ?? ""}>
            #{s.sample} <b>{formatMetric(s.reward)}</b>
            {s.advantage !== null && <> adv {signed(s.advantage)}</>}
          </span>
        ))}
      </div>
    </div>
  );
}

/** The selected episode's group as a table: every sample's reward and advantage, the selected one marked. */
export function GroupSamplesTable({ group, selectedSeq }: { group: TranscriptGroup; selectedSeq: number }) {
  return (
    <details open className="group-table" data-testid="transcript-group-table">
      <summary>
        Group {group.group} of step {group.step} · <GroupSummary group={group} />
      </summary>
      <table className="small">
        <thead>
          <tr>
            <th>sample</th>
            <th>reward</th>
            <th>advantage</th>
          </tr>
        </thead>
        <tbody>
          {group.samples.map((s) => (
            <tr key={s.seq} aria-current={s.seq === selectedSeq ? "true" : undefined} data-testid="group-table-sample">
              <td>#{s.sample}</td>
              <td>{formatMetric(s.reward)}</td>
              <td>{s.advantage === null ? "–" : signed(s.advantage)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
