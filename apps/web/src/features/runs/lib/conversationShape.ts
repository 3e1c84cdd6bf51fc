/**
 * How a transcript's speakers are named and what a conversation looks like at a glance: the
 * sequence of speakers (`user → student → partner → student`) with its turn count, for a list row.
 */

export interface ShapeMessage {
  actor: string;
  role: string;
}

/**
 * The name a message is shown under. The prompt (role `user`) is labelled by its role: its `actor` is
 * the dataset it came from, a source rather than a speaker. Everyone else by the actor who spoke.
 */
export function speakerLabel(m: ShapeMessage): { name: string; source: string | null } {
  if (m.role === "user") return { name: "user", source: m.actor === "" || m.actor === "user" ? null : m.actor };
  return { name: m.actor, source: null };
}

/** The speakers of the turns (system prompts are setup, not turns), in order. */
export function speakers(messages: readonly ShapeMessage[]): string[] {
  return messages.filter((m) => m.role !== "system").map((m) => speakerLabel(m).name);
}

const ARROW = " → ";
/** Labels shown before a long sequence is cut in the middle. */
const MAX_LABELS = 7;

/** Consecutive repeats of one speaker as `name×n`. */
function collapseRepeats(names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < names.length; ) {
    let j = i;
    while (j < names.length && names[j] === names[i]) j++;
    out.push(j - i > 1 ? `${names[i]}×${j - i}` : names[i]!);
    i = j;
  }
  return out;
}

/** `rest` as one pattern of 2 or 3 labels repeated k ≥ 2 times, or null. */
function repeatedPattern(rest: readonly string[]): { pattern: string[]; times: number } | null {
  for (let p = 2; p <= 3; p++) {
    if (rest.length < 2 * p || rest.length % p !== 0) continue;
    if (rest.every((name, i) => name === rest[i % p])) return { pattern: rest.slice(0, p), times: rest.length / p };
  }
  return null;
}

/**
 * The conversation's shape, compactly: `user → student → partner → student`; a speaker repeated in a
 * row as `student×3`; a repeated exchange as `user → (alice → bob)×5`; anything longer cut in the middle
 * (`user → alice → bob → … → bob`). `turns` counts every non-system message.
 */
export function conversationShape(messages: readonly ShapeMessage[]): { turns: number; text: string } {
  const names = speakers(messages);
  if (names.length === 0) return { turns: 0, text: "(no turns)" };
  const labels = collapseRepeats(names);
  // The prompt (or whoever opens) then a repeated exchange.
  for (const start of [0, 1]) {
    const found = repeatedPattern(labels.slice(start));
    if (found) {
      const head = labels.slice(0, start);
      return { turns: names.length, text: [...head, `(${found.pattern.join(ARROW)})×${found.times}`].join(ARROW) };
    }
  }
  const text = labels.length <= MAX_LABELS ? labels.join(ARROW) : [...labels.slice(0, MAX_LABELS - 2), "…", labels.at(-1)!].join(ARROW);
  return { turns: names.length, text };
}
