import { emaDebiased } from "./ema";

/**
 * The run header's reward: one smoothed value per actor, named. It showed "last reward", the latest
 * step of whichever actor sorted first, unnamed, and one noisy step of it (GRPO rewards jump by a group's
 * luck). Smoothed with the de-biased EMA the charts offer, over the points drawn.
 */
export const HEADER_SMOOTHING = 0.8;

export interface ActorReward {
  actor: string;
  /** The smoothed reward at the newest step. */
  smoothed: number;
  /** The newest step's own value. */
  last: number;
  step: number;
}

export function actorRewards(series: readonly { actor: string; points: readonly { step: number; value: number }[] }[], weight = HEADER_SMOOTHING): ActorReward[] {
  const out: ActorReward[] = [];
  for (const s of series) {
    const points = s.points.filter((p) => Number.isFinite(p.value));
    const newest = points.at(-1);
    if (!newest) continue;
    const smoothed = emaDebiased(points.map((p) => p.value), weight).at(-1)!;
    out.push({ actor: s.actor, smoothed, last: newest.value, step: newest.step });
  }
  return out;
}

/** Trainable local actors whose KL penalty is off (training.klBeta 0): no reference is kept, KL is not measured. */
export function klOffActors(spec: unknown): string[] {
  const actors = (spec as { actors?: unknown } | null)?.actors;
  if (!Array.isArray(actors)) return [];
  return actors
    .filter((a): a is { name: string; trainable?: boolean; backend?: string; training?: { klBeta?: number } } => typeof a === "object" && a !== null && typeof (a as { name?: unknown }).name === "string")
    .filter((a) => a.trainable !== false && a.backend !== "openai" && (a.training?.klBeta ?? 0) === 0)
    .map((a) => a.name);
}
