/**
 * The environment's actors as the language sees them: duplicates dropped, first occurrence
 * kept. Order matters: "any actor" (`*`) indexes this list.
 */
export function normalizeActors(actors: readonly string[]): string[] {
  return [...new Set(actors)];
}
