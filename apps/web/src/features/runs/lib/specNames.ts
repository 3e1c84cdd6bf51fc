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
export function actorColour(actors: readonly string[], actor: string): string {
  const i = actors.indexOf(actor);
  return ACTOR_COLOURS[(i === -1 ? actors.length : i) % ACTOR_COLOURS.length]!;
}
