/**
 * GRPO groups in the transcript list: episodes of one (step, environment, group) share a prompt, and a
 * sample's advantage is its reward against the group's (mean, std). The list shows a header row per
 * group with those and every sample's reward and advantage, then the group's episodes.
 */

export interface GroupId {
  step: number;
  environment: string;
  group: number;
}

export interface GroupSample {
  seq: number;
  sample: number;
  reward: number;
  advantage: number | null;
}

/** Every recorded sample of one group (not only those a filter matched). */
export interface TranscriptGroup extends GroupId {
  samples: GroupSample[];
}

export const groupKey = (g: GroupId): string => JSON.stringify([g.step, g.environment, g.group]);

/**
 * Mean and standard deviation of a group's rewards. The std has Bessel's correction, as the runtime's
 * group advantages (and TRL's) divide by: (reward − mean) / (std + ε). One sample: std 0.
 */
export function groupStats(rewards: readonly number[]): { n: number; mean: number; std: number } {
  const n = rewards.length;
  if (n === 0) return { n, mean: Number.NaN, std: Number.NaN };
  const mean = rewards.reduce((a, r) => a + r, 0) / n;
  const std = n < 2 ? 0 : Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1));
  return { n, mean, std };
}

export type TranscriptRow<E> = { kind: "group"; key: string; id: GroupId; group: TranscriptGroup | null } | { kind: "episode"; episode: E };

/**
 * The list's rows: each run of consecutive episodes of one group under a header row with that group's
 * recorded samples (null until known). Episodes keep their order; a group split by others (runs recorded
 * before whole groups were) gets a header at each run.
 */
export function transcriptRows<E extends GroupId & { seq: number }>(
  episodes: readonly E[],
  groups: ReadonlyMap<string, TranscriptGroup>,
): TranscriptRow<E>[] {
  const rows: TranscriptRow<E>[] = [];
  let previous: string | null = null;
  for (const episode of episodes) {
    const key = groupKey(episode);
    if (key !== previous) {
      const id = { step: episode.step, environment: episode.environment, group: episode.group };
      // The header's row key includes its first episode, so a group split in two has two distinct rows.
      rows.push({ kind: "group", key: `${key}@${episode.seq}`, id, group: groups.get(key) ?? null });
      previous = key;
    }
    rows.push({ kind: "episode", episode });
  }
  return rows;
}
