import { formatMetric } from "../../../lib/format";

/**
 * Each line's newest value, for a chart's header: one entry per series (actor or run) that has
 * points, in the legend's order. Reading "reward 0.31 · coach 0.12" at a glance is what a W&B
 * user expects; the header used to show the first series' value only.
 */
export interface LatestValue {
  label: string;
  colour: string;
  step: number;
  text: string;
}

export function latestValues(series: readonly { label: string; colour: string; points: readonly { step: number; value: number }[] }[]): LatestValue[] {
  return series.flatMap((s) => {
    const last = s.points.at(-1);
    return last ? [{ label: s.label, colour: s.colour, step: last.step, text: formatMetric(last.value) }] : [];
  });
}
