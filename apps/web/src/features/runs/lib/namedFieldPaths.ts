import { specNames } from "./specNames";

/**
 * Field paths in a message, with list indexes replaced by the item's name: `actors.2.model` reads
 * `actors[Carol].model` (top-level lists only). The runtime and the schema speak in indexes; a person reading why their
 * run failed thinks of the actor by name. Only lists whose items are named in the spec are
 * rewritten, and an index the spec does not have is left as it is.
 */
const NAMED_LISTS = ["actors", "datasets", "rewards", "environments"] as const;

function listNames(spec: unknown): Record<(typeof NAMED_LISTS)[number], string[]> {
  const s = typeof spec === "object" && spec !== null ? (spec as Record<string, unknown>) : {};
  const names = (key: string) => specNames({ actors: s[key] }).actors;
  const { actors, environments } = specNames(spec);
  return { actors, environments, datasets: names("datasets"), rewards: names("rewards") };
}

export function namedFieldPaths(text: string, spec: unknown): string {
  const lists = listNames(spec);
  return text.replace(/(?<![\w.])(actors|datasets|rewards|environments)\.(\d+)\b/g, (whole, list: keyof typeof lists, index: string) => {
    const name = lists[list][Number(index)];
    return name === undefined ? whole : `${list}[${name}]`;
  });
}
