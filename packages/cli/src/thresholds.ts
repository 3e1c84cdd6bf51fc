import { CliError, EXIT } from "./exitCodes";

/**
 * `--fail-below reward_mean=0.5` / `--fail-above loss=2`: checks of a metric's final value (the value
 * at its last step). Metric names may be written with `_` for `/` (`reward_mean` is `reward/mean`),
 * which keeps them free of shell and YAML quoting.
 */

export interface Threshold {
  metric: string;
  kind: "below" | "above";
  value: number;
}

export interface SeriesLike {
  name: string;
  actor: string;
  points: { step: number; value: number }[];
}

export interface CheckResult {
  threshold: Threshold;
  name: string | null;
  actor: string | null;
  final: number | null;
  ok: boolean;
  line: string;
}

export function parseThreshold(raw: string, kind: Threshold["kind"]): Threshold {
  const match = /^([^=\s]+)=(.+)$/.exec(raw.trim());
  const flag = kind === "below" ? "--fail-below" : "--fail-above";
  if (!match) throw new CliError(`${flag} "${raw}": expected METRIC=NUMBER, e.g. ${flag} reward_mean=0.5`);
  const value = Number(match[2]);
  if (!Number.isFinite(match[2]!.trim() === "" ? NaN : value)) {
    throw new CliError(`${flag} "${raw}": "${match[2]}" is not a number`);
  }
  return { metric: match[1]!, kind, value };
}

const normalise = (name: string) => name.replace(/\//g, "_");

export function matchesMetric(seriesName: string, wanted: string): boolean {
  return seriesName === wanted || normalise(seriesName) === normalise(wanted);
}

/** One result per threshold and matching series; a metric no series reports is a miss. */
export function checkThresholds(thresholds: Threshold[], series: SeriesLike[], actor?: string): CheckResult[] {
  const results: CheckResult[] = [];
  for (const t of thresholds) {
    const matching = series.filter((s) => matchesMetric(s.name, t.metric) && (actor === undefined || s.actor === actor) && s.points.length > 0);
    if (matching.length === 0) {
      const who = actor !== undefined ? ` for actor "${actor}"` : "";
      results.push({ threshold: t, name: null, actor: null, final: null, ok: false, line: `${t.metric}: not reported by the run${who}: MISSED` });
      continue;
    }
    for (const s of matching) {
      const last = s.points.reduce((a, b) => (b.step > a.step ? b : a));
      const ok = t.kind === "below" ? last.value >= t.value : last.value <= t.value;
      const label = s.actor ? `${s.name} [${s.actor}]` : s.name;
      const op = t.kind === "below" ? ">=" : "<=";
      results.push({
        threshold: t,
        name: s.name,
        actor: s.actor,
        final: last.value,
        ok,
        line: `${label} at step ${last.step} = ${last.value} (needs ${op} ${t.value}): ${ok ? "ok" : "MISSED"}`,
      });
    }
  }
  return results;
}

export const exitForChecks = (results: CheckResult[]) => (results.every((r) => r.ok) ? EXIT.ok : EXIT.thresholdMissed);
