/**
 * Python's view of the values a Jinja template sees, so the browser preview prints what the runtime's
 * jinja2 prints: `None`, `True`, `2.0` after a division, `['a', 1]` for a list, `{'k': None}` for a dict.
 * JSON numbers reach the browser without their `.0`, so a float field that holds a whole number prints
 * like an int here (jinja2 would print `1.0`); values the template computes keep Python's kind.
 */

/** A number that Python holds as a float (result of `/`, `float`, `round`). */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** jinja2's StrictUndefined: a name or attribute that is not there; most uses raise with its message. */
export class Undefined {
  constructor(readonly message: string) {}
}

export class TemplateRenderError extends Error {}

export function num(v: unknown): number | null {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  return null;
}

export function isFloat(v: unknown): boolean {
  return v instanceof PyFloat || (typeof v === "number" && !Number.isInteger(v));
}

export function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof PyFloat) && !(v instanceof Undefined);
}

export function typeName(v: unknown): string {
  if (v === null) return "NoneType";
  if (typeof v === "string") return "str";
  if (typeof v === "boolean") return "bool";
  if (v instanceof PyFloat) return "float";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (Array.isArray(v)) return "list";
  return "dict";
}

/** Raises StrictUndefined's error if `v` is undefined (jinja2 raises on print, truth, iteration, arithmetic). */
export function defined<T>(v: T | Undefined): T {
  if (v instanceof Undefined) throw new TemplateRenderError(v.message);
  return v;
}

function floatRepr(n: number): string {
  if (Number.isNaN(n)) return "nan";
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf";
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return `${n}.0`;
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp >= 16 || exp < -4) {
    const [mantissa, e] = n.toExponential().split("e");
    const power = Number(e);
    return `${mantissa}e${power < 0 ? "-" : "+"}${String(Math.abs(power)).padStart(2, "0")}`;
  }
  return String(n);
}

export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of s) {
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else out += ch;
  }
  return quote + out + quote;
}

/** Python's repr(). */
export function pyRepr(v: unknown): string {
  if (typeof v === "string") return strRepr(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (isMapping(v)) return `{${Object.entries(v).map(([k, x]) => `${strRepr(k)}: ${pyRepr(x)}`).join(", ")}}`;
  return pyStr(v);
}

/** Python's str(), which is what `{{ value }}` prints. */
export function pyStr(v: unknown): string {
  v = defined(v);
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : floatRepr(v);
  return pyRepr(v);
}

/** Python truthiness. */
export function truthy(v: unknown): boolean {
  v = defined(v);
  if (v === null || v === undefined || v === false) return false;
  if (v instanceof PyFloat) return v.value !== 0;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isMapping(v)) return Object.keys(v).length > 0;
  return true;
}

/** Python `==`: numbers by value (1 == 1.0 == True), containers deeply, nothing across kinds. */
export function pyEquals(a: unknown, b: unknown): boolean {
  const x = num(a);
  const y = num(b);
  if (x !== null && y !== null) return x === y;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => pyEquals(v, b[i]));
  if (isMapping(a) && isMapping(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && pyEquals(a[k], b[k]));
  }
  return a === b;
}

/** What `for x in v` walks: lists, the characters of a string, the keys of a dict. */
export function iterate(v: unknown): unknown[] {
  v = defined(v);
  if (Array.isArray(v)) return v;
  if (typeof v === "string") return [...v];
  if (isMapping(v)) return Object.keys(v);
  throw new TemplateRenderError(`'${typeName(v)}' object is not iterable`);
}

export function length(v: unknown): number {
  v = defined(v);
  if (typeof v === "string") return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (isMapping(v)) return Object.keys(v).length;
  throw new TemplateRenderError(`object of type '${typeName(v)}' has no len()`);
}
