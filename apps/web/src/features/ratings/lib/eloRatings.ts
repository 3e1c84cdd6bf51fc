import { z } from "zod";

/**
 * Elo per checkpoint, shaped for the run page from the runtime's metrics (gpu-runtime troupe/ratings/rater.py):
 *
 *   per actor, at each checkpoint's step   elo/rating, elo/ci95, elo/games
 *   no actor ("")                          elo/opponent/<fixed opponent>   (random, the anchor, is 1000)
 *
 * With several game environments each name carries the environment: `elo/<environment>/rating`, ….
 * Ratings are a Bradley-Terry fit over every game so far; the point at a step is that checkpoint's weights as
 * rated then.
 */
export const ELO_ANCHOR = 1000;
export const ELO_ANCHOR_NAME = "random";

export const EloPoint = z.object({ step: z.number().int(), actor: z.string(), rating: z.number(), ci95: z.number(), games: z.number() });
export type EloPoint = z.infer<typeof EloPoint>;

export const EloPool = z.object({
  /** null: the run's one game environment (names without an environment). */
  environment: z.string().nullable(),
  actors: z.array(z.string()),
  /** Sorted by step, then actor. */
  points: z.array(EloPoint),
  /** Each fixed opponent's latest rating, the anchor first. */
  opponents: z.array(z.object({ name: z.string(), rating: z.number() })),
});
export type EloPool = z.infer<typeof EloPool>;

export const RunEloOutput = z.object({ pools: z.array(EloPool) });
export type RunEloOutput = z.infer<typeof RunEloOutput>;

export interface EloMetricRow {
  name: string;
  actor: string;
  step: number;
  value: number;
}

const FIELDS = ["rating", "ci95", "games"] as const;
type Field = (typeof FIELDS)[number];

/** `elo/[<environment>/](rating|ci95|games)` or `elo/[<environment>/]opponent/<name>`; null for anything else. */
export function parseEloName(name: string): { environment: string | null; field: Field } | { environment: string | null; opponent: string } | null {
  if (!name.startsWith("elo/")) return null;
  const parts = name.slice(4).split("/");
  const at = parts.length >= 2 && parts.at(-2) === "opponent" ? parts.length - 2 : -1;
  if (at >= 0) {
    if (at > 1) return null;
    return { environment: at === 1 ? parts[0]! : null, opponent: parts.at(-1)! };
  }
  const field = parts.at(-1) as Field;
  if (!FIELDS.includes(field) || parts.length > 2) return null;
  return { environment: parts.length === 2 ? parts[0]! : null, field };
}

/** The stored `elo/…` metric rows of a run as one pool per game environment (environments by name, the unnamed first). */
export function shapeEloRatings(rows: readonly EloMetricRow[]): EloPool[] {
  const pools = new Map<string | null, { points: Map<string, EloPoint>; opponents: Map<string, { step: number; rating: number }> }>();
  const pool = (env: string | null) => {
    let p = pools.get(env);
    if (!p) pools.set(env, (p = { points: new Map(), opponents: new Map() }));
    return p;
  };
  for (const row of rows) {
    const parsed = parseEloName(row.name);
    if (!parsed) continue;
    const p = pool(parsed.environment);
    if ("opponent" in parsed) {
      const seen = p.opponents.get(parsed.opponent);
      if (!seen || row.step >= seen.step) p.opponents.set(parsed.opponent, { step: row.step, rating: row.value });
      continue;
    }
    if (row.actor === "") continue; // per-actor names only
    const key = `${row.step}\u0000${row.actor}`;
    const point = p.points.get(key) ?? { step: row.step, actor: row.actor, rating: Number.NaN, ci95: 0, games: 0 };
    point[parsed.field] = row.value;
    p.points.set(key, point);
  }
  const out: EloPool[] = [];
  for (const [environment, p] of pools) {
    const points = [...p.points.values()].filter((x) => Number.isFinite(x.rating)).sort((a, b) => a.step - b.step || a.actor.localeCompare(b.actor));
    const opponents = [...p.opponents.entries()]
      .map(([name, o]) => ({ name, rating: o.rating }))
      .sort((a, b) => Number(b.name === ELO_ANCHOR_NAME) - Number(a.name === ELO_ANCHOR_NAME) || a.name.localeCompare(b.name));
    if (points.length === 0 && opponents.length === 0) continue;
    if (!opponents.some((o) => o.name === ELO_ANCHOR_NAME)) opponents.unshift({ name: ELO_ANCHOR_NAME, rating: ELO_ANCHOR });
    out.push({ environment, actors: [...new Set(points.map((x) => x.actor))].sort(), points, opponents });
  }
  return out.sort((a, b) => (a.environment === null ? -1 : b.environment === null ? 1 : a.environment.localeCompare(b.environment)));
}

/** Recharts rows: one per checkpoint step, `<actor>` its rating and `<actor>:ci` its [low, high] band. */
export type EloChartRow = { step: number } & Record<string, number | [number, number]>;

export function eloChartRows(pool: EloPool): EloChartRow[] {
  const rows = new Map<number, EloChartRow>();
  for (const p of pool.points) {
    const row = rows.get(p.step) ?? ({ step: p.step } as EloChartRow);
    row[p.actor] = p.rating;
    row[`${p.actor}:ci`] = [p.rating - p.ci95, p.rating + p.ci95];
    rows.set(p.step, row);
  }
  return [...rows.values()].sort((a, b) => a.step - b.step);
}

/** Each actor's latest rating, for the legend: "alice 1240 ± 85 (48 games)". */
export function latestRatings(pool: EloPool): EloPoint[] {
  const latest = new Map<string, EloPoint>();
  for (const p of pool.points) latest.set(p.actor, p);
  return pool.actors.map((a) => latest.get(a)!).filter(Boolean);
}

/** True for the metrics this view draws (the metric grid leaves them to it). */
export const isEloMetric = (name: string) => name.startsWith("elo/");
