import { orderRunSpec } from "@troupe/contracts";

/**
 * The difference between 2–10 run specs as flat rows: one per leaf path (`trainer.lr`,
 * `actors[0].model`), with each spec's value there (undefined where it has none) and whether they differ.
 * Arrays are compared index by index; objects key by key. Rows follow the RunSpec's own key order
 * (`orderRunSpec`, whatever order the specs arrive in), so the table reads like the spec; a path only
 * a later spec has comes after the first spec's paths.
 */
export interface SpecDiffRow {
  path: string;
  values: unknown[];
  differs: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function flatten(value: unknown, path: string, out: Map<string, unknown>): void {
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) out.set(path, {});
    for (const k of keys) flatten(value[k], path ? `${path}.${k}` : k, out);
  } else if (Array.isArray(value)) {
    if (value.length === 0) out.set(path, []);
    value.forEach((v, i) => flatten(v, `${path}[${i}]`, out));
  } else {
    out.set(path, value);
  }
}

/** Leaf values compare by JSON text (so `{}` equals `{}`, and 1 differs from "1"). */
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function diffSpecs(specs: readonly unknown[]): SpecDiffRow[] {
  const flat = specs.map((s) => {
    const m = new Map<string, unknown>();
    flatten(orderRunSpec(s), "", m);
    return m;
  });
  const paths: string[] = [];
  const seen = new Set<string>();
  for (const m of flat) for (const p of m.keys()) if (!seen.has(p)) (seen.add(p), paths.push(p));
  return paths.map((path) => {
    const values = flat.map((m) => m.get(path));
    return { path, values, differs: values.some((v) => !same(v, values[0])) };
  });
}
