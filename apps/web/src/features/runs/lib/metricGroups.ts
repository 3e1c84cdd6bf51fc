/**
 * Groups the metric names a run reports into chart sections, in the order a reader scans them.
 * Names are discovered from the run's data; anything unknown lands in "Other", so a new metric of the
 * runtime shows up without a change here.
 */
export interface MetricGroup {
  title: string;
  names: string[];
}

const GROUPS: { title: string; match: (name: string) => boolean }[] = [
  { title: "Reward", match: (n) => n.startsWith("reward/") || n.startsWith("advantage/") },
  { title: "Policy", match: (n) => ["loss", "kl", "clip_frac", "entropy", "logprob_gap", "truncation_rate"].includes(n) },
  { title: "Optimiser", match: (n) => ["grad_norm", "lr"].includes(n) },
  { title: "Throughput", match: (n) => ["completion_len", "tokens_per_s", "step_time_s"].includes(n) },
];

/** Names drawn as a band of another chart, not on their own. */
export const BAND_OF: Record<string, string> = { "reward/std": "reward/mean" };
const ORDER = ["reward/mean", "advantage/mean", "loss", "kl", "clip_frac", "entropy", "logprob_gap", "grad_norm", "lr", "completion_len", "tokens_per_s", "step_time_s"];
const rank = (n: string) => {
  const i = ORDER.indexOf(n);
  return i === -1 ? ORDER.length : i;
};

export function groupMetrics(names: Iterable<string>): MetricGroup[] {
  const bandNames = new Set(Object.keys(BAND_OF));
  const unique = [...new Set(names)].filter((n) => !bandNames.has(n) || !new Set(names).has(BAND_OF[n]!));
  const groups = [...GROUPS.map((g) => ({ title: g.title, names: [] as string[] })), { title: "Other", names: [] as string[] }];
  for (const n of unique) {
    const i = GROUPS.findIndex((g) => g.match(n));
    groups[i === -1 ? groups.length - 1 : i]!.names.push(n);
  }
  for (const g of groups) g.names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return groups.filter((g) => g.names.length > 0);
}

/** Test id of a metric's chart: the ones the first e2e test knows keep their names. */
export function chartTestId(name: string): string {
  if (name === "reward/mean") return "chart-reward";
  if (name === "loss") return "chart-loss";
  return `chart-${name.replace(/[^a-z0-9]+/gi, "-")}`;
}
