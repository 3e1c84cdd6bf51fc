/**
 * Reading and writing a nested spec fragment by field path (`training.lora.rank`), immutably.
 * Writing `undefined` removes the key, so an emptied field falls back to the schema's default
 * instead of being stored as an explicit value.
 */
export type SpecObject = Record<string, unknown>;

export function getAt(obj: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as SpecObject)[key] : undefined), obj);
}

export function setAt(obj: SpecObject, path: string, value: unknown): SpecObject {
  const [head, ...rest] = path.split(".");
  const key = head!;
  const next: SpecObject = { ...obj };
  if (rest.length === 0) {
    if (value === undefined) delete next[key];
    else next[key] = value;
    return next;
  }
  const child = obj[key] && typeof obj[key] === "object" && !Array.isArray(obj[key]) ? (obj[key] as SpecObject) : {};
  const updated = setAt(child, rest.join("."), value);
  if (Object.keys(updated).length === 0) delete next[key];
  else next[key] = updated;
  return next;
}

/** Issues keyed by field path; a server path `spec.training.lr` and a client path `training.lr` land on the same field. */
export function issuesByPath(issues: { path: string; message: string }[], prefix = "spec."): Record<string, string> {
  const out: Record<string, string> = {};
  for (const issue of issues) {
    const path = issue.path.startsWith(prefix) ? issue.path.slice(prefix.length) : issue.path;
    out[path] = out[path] ? `${out[path]}; ${issue.message}` : issue.message;
  }
  return out;
}
