/** Actor and environment names of a frozen spec, read defensively (old specs may lack fields). */
export function specNames(spec: unknown): { actors: string[]; environments: string[] } {
  const names = (list: unknown) =>
    Array.isArray(list)
      ? list.flatMap((x) => (typeof x === "object" && x !== null && typeof (x as { name?: unknown }).name === "string" ? [(x as { name: string }).name] : []))
      : [];
  const s = typeof spec === "object" && spec !== null ? (spec as { actors?: unknown; environments?: unknown }) : {};
  return { actors: names(s.actors), environments: names(s.environments) };
}

/** One colour per actor, stable for a run (by the actor's place in the spec). */
export const ACTOR_COLOURS = ["#2456c7", "#c2410c", "#15803d", "#7e22ce", "#0e7490", "#b91c1c", "#a16207", "#be185d"];

/** A small stable hash of a name (FNV-1a), so an actor the spec does not list still gets its own colour. */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export function actorColour(actors: readonly string[], actor: string): string {
  const i = actors.indexOf(actor);
  // Actors outside the spec (an environment's judge, an old spec without actors) take the colours
  // after the spec's own, picked by name: two of them rarely share one, and never change between charts.
  const n = ACTOR_COLOURS.length;
  const slot = i !== -1 ? i : actors.length + (nameHash(actor) % Math.max(1, n - actors.length));
  return ACTOR_COLOURS[slot % n]!;
}
