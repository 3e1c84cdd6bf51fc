/**
 * The jinja2 filters and tests the preview knows, each written to jinja2's documented behaviour, so the
 * preview prints what the run will print. A filter or test not listed here fails the preview with
 * jinja2's own message ("No filter named 'x'."), never with a silently different text.
 */
import {
  PyFloat,
  TemplateRenderError,
  Undefined,
  defined,
  isFloat,
  isMapping,
  iterate,
  length,
  num,
  pyEquals,
  pyRepr,
  pyStr,
  truthy,
  typeName,
} from "./pyValues";

export type Kwargs = Record<string, unknown>;
export type Filter = (value: unknown, args: unknown[], kwargs: Kwargs) => unknown;
export type Test = (value: unknown, args: unknown[]) => boolean;

function arg(args: unknown[], kwargs: Kwargs, index: number, name: string, fallback: unknown): unknown {
  if (name in kwargs) return kwargs[name];
  return index < args.length ? args[index] : fallback;
}

function str(v: unknown): string {
  return pyStr(v);
}

function needNumber(v: unknown, what: string): number {
  const n = num(defined(v));
  if (n === null) throw new TemplateRenderError(`${what}: expected a number, got '${typeName(v)}'`);
  return n;
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" };

/** json.dumps(sort_keys=True) with jinja2's HTML-safe escapes of <, >, & and '. */
function toJson(v: unknown): string {
  v = defined(v);
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v instanceof PyFloat) return pyStr(v);
  if (typeof v === "number") return pyStr(v);
  if (typeof v === "string") {
    return JSON.stringify(v)
      .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/'/g, "\\u0027");
  }
  if (Array.isArray(v)) return `[${v.map(toJson).join(", ")}]`;
  if (isMapping(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${toJson(k)}: ${toJson(v[k])}`).join(", ")}}`;
  }
  return JSON.stringify(v);
}

function title(s: string): string {
  // jinja2: the first letter of each word upper, the rest lower (words split on spaces, -, (, {, [).
  return s.replace(/([-\s({[]*)([^-\s({[]+)/g, (_, sep: string, word: string) => sep + word.charAt(0).toUpperCase() + word.slice(1).toLowerCase());
}

function pyCompare(a: unknown, b: unknown): number {
  const x = num(a);
  const y = num(b);
  if (x !== null && y !== null) return x - y;
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  throw new TemplateRenderError(`'<' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

export { pyCompare };

export const FILTERS: Record<string, Filter> = {
  upper: (v) => str(v).toUpperCase(),
  lower: (v) => str(v).toLowerCase(),
  capitalize: (v) => {
    const s = str(v);
    return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
  },
  title: (v) => title(str(v)),
  trim: (v, a, k) => {
    const chars = arg(a, k, 0, "chars", null);
    const s = str(v);
    if (chars === null) return s.trim();
    const set = new Set([...str(chars)]);
    let start = 0;
    let end = s.length;
    while (start < end && set.has(s[start]!)) start++;
    while (end > start && set.has(s[end - 1]!)) end--;
    return s.slice(start, end);
  },
  length: (v) => length(v),
  count: (v) => length(v),
  string: (v) => str(v),
  safe: (v) => defined(v),
  escape: (v) => str(v).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!),
  e: (v) => str(v).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!),
  default: (v, a, k) => {
    const fallback = arg(a, k, 0, "default_value", "");
    const boolean = truthy(arg(a, k, 1, "boolean", false));
    if (v instanceof Undefined || (boolean && !truthy(v))) return fallback;
    return v;
  },
  join: (v, a, k) => {
    const sep = str(arg(a, k, 0, "d", ""));
    const attribute = arg(a, k, 1, "attribute", null);
    return iterate(v).map((x) => str(attribute === null ? x : lookupKey(x, attribute))).join(sep);
  },
  first: (v) => iterate(v)[0] ?? new Undefined("No first item, sequence was empty."),
  last: (v) => {
    const items = iterate(v);
    return items.length ? items[items.length - 1] : new Undefined("No last item, sequence was empty.");
  },
  list: (v) => [...iterate(v)],
  reverse: (v) => (typeof defined(v) === "string" ? [...(v as string)].reverse().join("") : [...iterate(v)].reverse()),
  sort: (v, a, k) => {
    const reverse = truthy(arg(a, k, 0, "reverse", false));
    const attribute = arg(a, k, 2, "attribute", null);
    const key = (x: unknown) => {
      const y = attribute === null ? x : lookupKey(x, attribute);
      return typeof y === "string" && !truthy(arg(a, k, 1, "case_sensitive", false)) ? y.toLowerCase() : y;
    };
    const out = [...iterate(v)].sort((x, y) => pyCompare(key(x), key(y)));
    return reverse ? out.reverse() : out;
  },
  unique: (v) => {
    const out: unknown[] = [];
    for (const x of iterate(v)) if (!out.some((y) => pyEquals(typeof x === "string" ? x.toLowerCase() : x, typeof y === "string" ? y.toLowerCase() : y))) out.push(x);
    return out;
  },
  replace: (v, a, k) => {
    const s = str(v);
    const old = str(arg(a, k, 0, "old", ""));
    const repl = str(arg(a, k, 1, "new", ""));
    const count = arg(a, k, 2, "count", null);
    if (count === null) return s.split(old).join(repl);
    let out = s;
    let from = 0;
    for (let i = 0; i < needNumber(count, "replace"); i++) {
      const at = out.indexOf(old, from);
      if (at < 0) break;
      out = out.slice(0, at) + repl + out.slice(at + old.length);
      from = at + repl.length;
    }
    return out;
  },
  int: (v, a, k) => {
    const fallback = arg(a, k, 0, "default", 0);
    const n = typeof v === "string" ? Number(v.trim()) : num(defined(v));
    return n === null || Number.isNaN(n) ? fallback : Math.trunc(n);
  },
  float: (v, a, k) => {
    const fallback = arg(a, k, 0, "default", new PyFloat(0));
    const n = typeof v === "string" ? Number(v.trim()) : num(defined(v));
    return n === null || Number.isNaN(n) ? fallback : new PyFloat(n);
  },
  round: (v, a, k) => {
    const precision = needNumber(arg(a, k, 0, "precision", 0), "round");
    const method = str(arg(a, k, 1, "method", "common"));
    const scale = 10 ** precision;
    const x = needNumber(v, "round") * scale;
    // "common" is Python's round(): halves go to the even neighbour (round(2.5) == 2).
    const halfEven = Math.abs(x - Math.trunc(x)) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x);
    const r = method === "ceil" ? Math.ceil(x) : method === "floor" ? Math.floor(x) : halfEven;
    return new PyFloat(r / scale);
  },
  abs: (v) => {
    const n = Math.abs(needNumber(v, "abs"));
    return isFloat(v) ? new PyFloat(n) : n;
  },
  sum: (v, a, k) => {
    const attribute = arg(a, k, 0, "attribute", null);
    const start = arg(a, k, 1, "start", 0);
    let total = needNumber(start, "sum");
    let float = isFloat(start);
    for (const x of iterate(v)) {
      const y = attribute === null ? x : lookupKey(x, attribute);
      total += needNumber(y, "sum");
      float ||= isFloat(y);
    }
    return float ? new PyFloat(total) : total;
  },
  min: (v) => [...iterate(v)].sort(pyCompare)[0] ?? new Undefined("No aggregated item, sequence was empty."),
  max: (v) => [...iterate(v)].sort(pyCompare).reverse()[0] ?? new Undefined("No aggregated item, sequence was empty."),
  wordcount: (v) => (str(v).match(/\w+/g) ?? []).length,
  items: (v) => (isMapping(defined(v)) ? Object.entries(v as Record<string, unknown>) : []),
  tojson: (v) => toJson(v),
  map: (v, a, k) => {
    const attribute = arg(a, k, Number.POSITIVE_INFINITY, "attribute", null);
    if (attribute !== null) return iterate(v).map((x) => lookupKey(x, attribute));
    const name = str(a[0] ?? "");
    const filter = FILTERS[name];
    if (!filter) throw new TemplateRenderError(`No filter named '${name}'.`);
    return iterate(v).map((x) => filter(x, a.slice(1), {}));
  },
  batch: (v, a, k) => {
    const size = needNumber(arg(a, k, 0, "linecount", 1), "batch");
    const items = iterate(v);
    const out: unknown[][] = [];
    for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
    return out;
  },
  center: (v, a, k) => {
    const s = str(v);
    const width = needNumber(arg(a, k, 0, "width", 80), "center");
    const total = Math.max(0, width - s.length);
    // Python's str.center puts the odd space on the right when the padding is odd and the width even.
    const left = Math.floor(total / 2) + (total % 2 & width % 2);
    return " ".repeat(left) + s + " ".repeat(total - left);
  },
  indent: (v, a, k) => {
    const width = arg(a, k, 0, "width", 4);
    const pad = typeof width === "string" ? width : " ".repeat(needNumber(width, "indent"));
    const first = truthy(arg(a, k, 1, "first", false));
    const blank = truthy(arg(a, k, 2, "blank", false));
    const lines = str(v).split("\n");
    return lines.map((line, i) => ((i > 0 || first) && (blank || line !== "") ? pad + line : line)).join("\n");
  },
  truncate: (v, a, k) => {
    const s = str(v);
    const size = needNumber(arg(a, k, 0, "length", 255), "truncate");
    const killwords = truthy(arg(a, k, 1, "killwords", false));
    const end = str(arg(a, k, 2, "end", "..."));
    const leeway = needNumber(arg(a, k, 3, "leeway", 5), "truncate");
    if (s.length <= size + leeway) return s;
    if (killwords) return s.slice(0, size - end.length) + end;
    const cut = s.slice(0, size - end.length);
    const space = cut.lastIndexOf(" ");
    return (space >= 0 ? cut.slice(0, space) : cut) + end;
  },
  pprint: (v) => pyRepr(v),
};

/** `x[key]` / `x.key` for a filter's `attribute=` argument (dotted paths and integer parts, as jinja2). */
export function lookupKey(x: unknown, attribute: unknown): unknown {
  let cur = x;
  for (const part of String(attribute).split(".")) {
    const key: string | number = /^\d+$/.test(part) ? Number(part) : part;
    if (Array.isArray(cur) && typeof key === "number") cur = cur[key];
    else if (isMapping(cur) && String(key) in cur) cur = cur[String(key)];
    else return new Undefined(`'${typeName(cur)} object' has no attribute '${part}'`);
  }
  return cur;
}

export const TESTS: Record<string, Test> = {
  defined: (v) => !(v instanceof Undefined),
  undefined: (v) => v instanceof Undefined,
  none: (v) => v === null,
  boolean: (v) => typeof v === "boolean",
  true: (v) => v === true,
  false: (v) => v === false,
  number: (v) => typeof v === "number" || v instanceof PyFloat,
  integer: (v) => typeof v === "number" && Number.isInteger(v),
  float: (v) => isFloat(v),
  string: (v) => typeof v === "string",
  mapping: (v) => isMapping(v),
  sequence: (v) => typeof v === "string" || Array.isArray(v) || isMapping(v),
  iterable: (v) => typeof v === "string" || Array.isArray(v) || isMapping(v),
  even: (v) => needNumber(v, "even") % 2 === 0,
  odd: (v) => Math.abs(needNumber(v, "odd") % 2) === 1,
  divisibleby: (v, a) => needNumber(v, "divisibleby") % needNumber(a[0], "divisibleby") === 0,
  lower: (v) => str(v) === str(v).toLowerCase(),
  upper: (v) => str(v) === str(v).toUpperCase(),
  eq: (v, a) => pyEquals(v, a[0]),
  ne: (v, a) => !pyEquals(v, a[0]),
  in: (v, a) => contains(a[0], v),
};

/** Python `needle in haystack`. */
export function contains(haystack: unknown, needle: unknown): boolean {
  haystack = defined(haystack);
  if (typeof haystack === "string") return haystack.includes(str(needle));
  if (Array.isArray(haystack)) return haystack.some((x) => pyEquals(x, needle));
  if (isMapping(haystack)) return typeof needle === "string" && needle in haystack;
  throw new TemplateRenderError(`argument of type '${typeName(haystack)}' is not iterable`);
}
