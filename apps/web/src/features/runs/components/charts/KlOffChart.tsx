"use client";

import { ChartFrame } from "./ChartFrame";

/**
 * The KL chart's place when the KL penalty is off: a card that says so and why, instead of no chart at all
 * (a reader looking for KL could not tell "off" from "not reported yet").
 */
export function KlOffChart({ actors, measured }: { actors: string[]; measured: boolean }) {
  const who = actors.join(", ");
  return (
    <ChartFrame
      testId="chart-kl-off"
      title="kl"
      points={0}
      emptyText={
        measured
          ? `KL penalty off for ${who} (training.klBeta is 0): their lines, if any, are measured but not penalised.`
          : `KL is off for ${who}: training.klBeta is 0, so no reference model is kept and KL is not measured. Set klBeta above 0 to keep the policy near where it started.`
      }
    >
      {null}
    </ChartFrame>
  );
}
