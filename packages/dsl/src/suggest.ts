/**
 * "Did you mean" for unknown actors: Levenshtein distance where swapping two adjacent
 * letters also counts as one edit (optimal string alignment), compared case-insensitively.
 */
export function editDistance(first: string, second: string): number {
  // Code points, not UTF-16 units, so the distance matches Python's.
  const a = Array.from(first);
  const b = Array.from(second);
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The closest known name within max(1, floor(len / 3)) edits, ties going to the earlier
 * name in `known`; undefined when nothing is close. Only ASCII letters are case-folded,
 * so the answer is the same in every language.
 */
export function didYouMean(name: string, known: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(name.length / 3));
  const lower = asciiLower(name);
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const distance = editDistance(lower, asciiLower(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}
