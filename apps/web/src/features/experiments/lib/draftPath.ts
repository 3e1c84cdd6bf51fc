/**
 * Immutable read and write of a draft RunSpec by dotted path, arrays included
 * (`actors.0.training.learningRate`). Writing `undefined` removes an object key, so a cleared
 * input falls back to the schema default instead of storing an explicit value.
 */
export type Draft = Record<string, unknown>;

export function getIn(obj: unknown, path: string): unknown {
  if (path === "") return obj;
  return path.split(".").reduce<unknown>((node, key) => (node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined), obj);
}

export function setIn<T>(obj: T, path: string, value: unknown): T {
  const [key, ...rest] = path.split(".");
  const k = key!;
  const here: unknown = obj;
  if (Array.isArray(here)) {
    const i = Number(k);
    const copy = [...here];
    copy[i] = rest.length === 0 ? value : setIn(copy[i] ?? (/^\d+$/.test(rest[0]!) ? [] : {}), rest.join("."), value);
    return copy as T;
  }
  const base = here !== null && typeof here === "object" ? (here as Record<string, unknown>) : {};
  const next: Record<string, unknown> = { ...base };
  const child = rest.length === 0 ? value : setIn(base[k] ?? (/^\d+$/.test(rest[0]!) ? [] : {}), rest.join("."), value);
  if (child === undefined) delete next[k];
  else next[k] = child;
  return next as T;
}

/** A list in the draft, or an empty one when the field is missing or not a list. */
export function listAt(obj: unknown, path: string): Record<string, unknown>[] {
  const v = getIn(obj, path);
  return Array.isArray(v) ? (v as Record<string, unknown>[]) : [];
}
