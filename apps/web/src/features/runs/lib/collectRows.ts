import type { CollectedRow } from "@troupe/contracts";

/** A recorded episode as the collector reads it (an Episode row). */
export interface CollectEpisode {
  step: number;
  environment: string;
  datasetRow: number | null;
  reward: number;
  messages: { actor: string; role: string; content: string; trained: boolean }[];
}

export interface CollectOptions {
  runId: string;
  minReward: number;
  minRewardByActor?: Record<string, number>;
  actors?: string[];
  fromStep?: number;
  dedupe: boolean;
}

export interface CollectCounts {
  rows: CollectedRow[];
  perActor: Map<string, { threshold: number; scanned: number; kept: number }>;
  best: number | null;
}

/**
 * The prompt an actor's message answered: the dataset's prompt alone for a single-turn episode (what an sft
 * environment renders again, chat template included), else the conversation before it, one `speaker: text`
 * line per message (system prompts are the environment's, not the row's: left out).
 */
export function promptBefore(messages: CollectEpisode["messages"], index: number): string {
  const before = messages.slice(0, index).filter((m) => m.role !== "system");
  if (before.length === 1) return before[0]!.content;
  return before.map((m) => `${m.actor}: ${m.content}`).join("\n");
}

/**
 * Pure: every trained completion of the chosen actors whose episode's reward is at least its actor's
 * threshold. An episode's `reward` is its trained actor's (with several trained actors, their mean: the
 * episode event has no finer one), so the threshold is per actor, the score per episode.
 */
export function collectRows(episodes: readonly CollectEpisode[], options: CollectOptions): CollectCounts {
  const perActor = new Map<string, { threshold: number; scanned: number; kept: number }>();
  const seen = new Set<string>();
  const rows: CollectedRow[] = [];
  let best: number | null = null;
  const wanted = options.actors ? new Set(options.actors) : null;
  for (const episode of episodes) {
    if (options.fromStep !== undefined && episode.step < options.fromStep) continue;
    if (!Array.isArray(episode.messages)) continue; // a stored row no reader can parse
    episode.messages.forEach((m, index) => {
      if (m.role !== "assistant" || !m.trained || (wanted && !wanted.has(m.actor))) return;
      const threshold = options.minRewardByActor?.[m.actor] ?? options.minReward;
      const counts = perActor.get(m.actor) ?? { threshold, scanned: 0, kept: 0 };
      perActor.set(m.actor, counts);
      counts.scanned += 1;
      best = best === null ? episode.reward : Math.max(best, episode.reward);
      if (!(episode.reward >= threshold)) return;
      const prompt = promptBefore(episode.messages, index);
      const key = JSON.stringify([m.actor, prompt, m.content]);
      if (options.dedupe && seen.has(key)) return;
      seen.add(key);
      counts.kept += 1;
      rows.push({
        prompt,
        completion: m.content,
        actor: m.actor,
        reward: episode.reward,
        step: episode.step,
        environment: episode.environment,
        datasetRow: episode.datasetRow,
        run: options.runId,
      });
    });
  }
  return { rows, perActor, best };
}

export function rowsToJsonl(rows: readonly CollectedRow[]): string {
  return rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
}
