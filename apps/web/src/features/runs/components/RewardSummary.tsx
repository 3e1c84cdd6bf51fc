"use client";

import { formatMetric } from "../../../lib/format";
import { actorRewards, HEADER_SMOOTHING } from "../lib/rewardSummary";

/** The header's reward: smoothed per actor, each named (the newest step's own value on hover). */
export function RewardSummary(props: { series: { actor: string; points: { step: number; value: number }[] }[]; fallback: number | null }) {
  const rewards = actorRewards(props.series);
  const title = `reward/mean smoothed (EMA ${HEADER_SMOOTHING}, de-biased) per actor`;
  if (rewards.length === 0) {
    return (
      <span data-testid="run-rewards" title="reward/mean of the newest step">
        <b>reward</b>
        {formatMetric(props.fallback)}
      </span>
    );
  }
  return (
    <span data-testid="run-rewards" title={title}>
      <b>reward (smoothed)</b>
      {rewards.map((r, i) => (
        <span key={r.actor} data-testid="run-reward" data-actor={r.actor} title={`${r.actor}: ${formatMetric(r.smoothed)} smoothed; step ${r.step} alone: ${formatMetric(r.last)}`}>
          {i > 0 ? " · " : ""}
          {r.actor ? `${r.actor} ` : ""}
          {formatMetric(r.smoothed)}
        </span>
      ))}
    </span>
  );
}
