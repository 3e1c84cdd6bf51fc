/**
 * Groups the metric names a run reports into chart sections, in the order a reader scans them.
 * Names are discovered from the run's data; anything unknown lands in "Other", so a new metric of the
 * runtime shows up without a change here.
 */
export interface MetricGroup {
  title: string;
  names: string[];
}

/** `name` itself or a sub-metric of it (`completion_len` holds `completion_len/max`). */
const under = (name: string, base: string) => name === base || name.startsWith(`${base}/`);
const anyOf = (bases: string[]) => (n: string) => bases.some((b) => under(n, b));

const GROUPS: { title: string; match: (name: string) => boolean }[] = [
  { title: "Reward", match: anyOf(["reward", "advantage"]) },
  { title: "Policy", match: anyOf(["loss", "kl", "clip_frac", "entropy", "logprob_gap", "truncation_rate"]) },
  { title: "Critic", match: anyOf(["value", "returns"]) },
  // Acting environments' own numbers (gpu-runtime tools_env.py: calls, errors, success and answer rates).
  { title: "Tools", match: anyOf(["tools"]) },
  // Competitive environments: each player's outcome rates (gpu-runtime games/environment.py) and its Elo per
  // checkpoint (troupe/ratings: drawn by features/ratings' chart, not the grid).
  { title: "Games", match: anyOf(["game", "elo"]) },
  // Agents x turns: each actor's messages by turn index (gpu-runtime turn_metrics.py).
  { title: "Turns", match: anyOf(["turns"]) },
  { title: "Preferences and supervision", match: anyOf(["dpo", "sft"]) },
  { title: "Off-policy", match: anyOf(["staleness", "tis"]) },
  { title: "Optimiser", match: anyOf(["grad_norm", "lr"]) },
  // Rollout workers (gpu-runtime rollout/workers.py, `rollout.workers`): each pool's busy and idle seconds per step,
  // and the weight broadcast after the update; before Throughput, whose `time` prefix would take them.
  {
    title: "Rollout workers",
    match: (n) => ["time/rollout_busy_s", "time/rollout_idle_s", "time/trainer_busy_s", "time/trainer_idle_s", "time/weight_sync_s"].includes(n),
  },
  // `time/<phase>_s`: forward, backward, optimizer, reference and offload seconds per step (gpu-runtime phase_clock.py).
  { title: "Throughput", match: anyOf(["completion_len", "tokens_per_s", "step_time_s", "time"]) },
  { title: "Group filtering", match: anyOf(["kept_groups", "dropped_groups", "resampled_groups"]) },
  { title: "Eval", match: anyOf(["eval"]) },
];

const ORDER = [
  "reward/mean",
  "advantage/mean",
  "loss",
  "kl",
  "clip_frac",
  "entropy",
  "logprob_gap",
  "truncation_rate",
  "value/loss",
  "value/explained_variance",
  "returns/mean",
  "tools/success_rate",
  "tools/calls",
  "tools/errors",
  "tools/answer_rate",
  "dpo/margin",
  "dpo/accuracy",
  "grad_norm",
  "lr",
  "completion_len",
  "tokens_per_s",
  "step_time_s",
  "time/reference_s",
  "time/forward_s",
  "time/backward_s",
  "time/optimizer_s",
  "time/offload_s",
  "time/rollout_busy_s",
  "time/trainer_busy_s",
  "time/weight_sync_s",
  "time/rollout_idle_s",
  "time/trainer_idle_s",
];
const rank = (n: string) => {
  const i = ORDER.indexOf(n);
  return i === -1 ? ORDER.length : i;
};

/**
 * The chart a `…/std` series is drawn on as a ± band: `reward/std` → `reward/mean`,
 * `reward/correct/std` → `reward/correct`, `advantage/std` → `advantage/mean`. Null when it is not
 * a std or its chart is not among `names` (then it gets a chart of its own).
 */
export function bandTarget(name: string, names: ReadonlySet<string>): string | null {
  if (!name.endsWith("/std")) return null;
  const base = name.slice(0, -"/std".length);
  for (const target of [`${base}/mean`, base]) if (target !== name && names.has(target)) return target;
  return null;
}

/** The `…/std` series drawn as the band of chart `name`, if the run reports one. */
export function bandFor(name: string, names: ReadonlySet<string>): string | undefined {
  const base = name.endsWith("/mean") ? name.slice(0, -"/mean".length) : name;
  const std = `${base}/std`;
  return names.has(std) && bandTarget(std, names) === name ? std : undefined;
}

export function groupMetrics(names: Iterable<string>): MetricGroup[] {
  const all = new Set(names);
  const unique = [...all].filter((n) => bandTarget(n, all) === null);
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
