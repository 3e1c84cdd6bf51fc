/**
 * Walks the syntax tree of nunjucks' parser (a Jinja-compatible grammar) and renders it with jinja2's
 * meaning: StrictUndefined, Python's printing, comparison and truth. Nothing here builds code from text
 * (nunjucks' own renderer compiles templates with `new Function`, which the app's CSP rightly forbids),
 * so the preview runs under `script-src 'self' 'nonce-…'` with no 'unsafe-eval'. A construct this walker
 * does not know (macros, includes, blocks) fails the preview naming it rather than rendering differently.
 */
import { FILTERS, TESTS, contains, pyCompare, type Kwargs } from "./filters";
import { PyFloat, TemplateRenderError, Undefined, defined, isFloat, isMapping, iterate, num, pyEquals, pyStr, truthy, typeName } from "./pyValues";

/** The shape of nunjucks' parse-tree nodes (nunjucks/src/nodes.js); only the fields read here. */
export type TemplateNode = {
  typename: string;
  lineno: number;
  colno: number;
  value?: unknown;
  children?: TemplateNode[];
  target?: TemplateNode;
  val?: TemplateNode;
  left?: TemplateNode;
  right?: TemplateNode;
  cond?: TemplateNode;
  body?: TemplateNode;
  else_?: TemplateNode | null;
  arr?: TemplateNode;
  name?: TemplateNode;
  args?: TemplateNode;
  expr?: TemplateNode;
  ops?: TemplateNode[];
  type?: string;
  key?: TemplateNode;
  targets?: TemplateNode[];
};

type Scope = Map<string, unknown>;

class Context {
  private readonly scopes: Scope[];
  constructor(row: Record<string, unknown>) {
    this.scopes = [new Map(Object.entries(row))];
  }
  get(name: string): unknown {
    for (let i = this.scopes.length - 1; i >= 0; i--) if (this.scopes[i]!.has(name)) return this.scopes[i]!.get(name);
    if (name in GLOBALS) return GLOBALS[name];
    return new Undefined(`'${name}' is undefined`);
  }
  set(name: string, value: unknown): void {
    this.scopes[this.scopes.length - 1]!.set(name, value);
  }
  /** A `for` body's names (and `set` inside it) do not leak out, as in jinja2. */
  child<T>(fn: () => T): T {
    this.scopes.push(new Map());
    try {
      return fn();
    } finally {
      this.scopes.pop();
    }
  }
}

function range(...args: unknown[]): number[] {
  const n = args.map((a) => num(defined(a)) ?? 0);
  const [start, stop, step] = n.length === 1 ? [0, n[0]!, 1] : [n[0]!, n[1]!, n[2] ?? 1];
  if (step === 0) throw new TemplateRenderError("range() arg 3 must not be zero");
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

const GLOBALS: Record<string, unknown> = {
  True: true,
  False: false,
  None: null,
};

const CALLABLE_GLOBALS: Record<string, (args: unknown[], kwargs: Kwargs) => unknown> = {
  range: (args) => range(...args),
  dict: (_, kwargs) => ({ ...kwargs }),
};

function needStr(v: unknown, method: string): string {
  if (typeof v !== "string") throw new TemplateRenderError(`'${typeName(v)}' object has no attribute '${method}'`);
  return v;
}

/** The Python methods a template most often calls on a string, dict or list. */
function callMethod(target: unknown, method: string, args: unknown[]): unknown {
  target = defined(target);
  if (typeof target === "string") {
    const s = target;
    const chars = args[0] === undefined || args[0] === null ? null : pyStr(args[0]);
    const strip = (from: "both" | "left" | "right") => {
      const set = chars === null ? null : new Set([...chars]);
      const isStrip = (c: string) => (set ? set.has(c) : /\s/.test(c));
      let a = 0;
      let b = s.length;
      if (from !== "right") while (a < b && isStrip(s[a]!)) a++;
      if (from !== "left") while (b > a && isStrip(s[b - 1]!)) b--;
      return s.slice(a, b);
    };
    switch (method) {
      case "upper": return s.toUpperCase();
      case "lower": return s.toLowerCase();
      case "strip": return strip("both");
      case "lstrip": return strip("left");
      case "rstrip": return strip("right");
      case "title": return FILTERS.title!(s, [], {});
      case "capitalize": return FILTERS.capitalize!(s, [], {});
      case "startswith": return s.startsWith(pyStr(args[0]));
      case "endswith": return s.endsWith(pyStr(args[0]));
      case "replace": return FILTERS.replace!(s, args, {});
      case "count": return s.split(pyStr(args[0])).length - 1;
      case "join": return iterate(args[0]).map((x) => needStr(x, "join")).join(s);
      case "split": return chars === null ? s.split(/\s+/).filter((w) => w !== "") : s.split(chars);
    }
  } else if (isMapping(target)) {
    const d = target;
    switch (method) {
      case "items": return Object.entries(d);
      case "keys": return Object.keys(d);
      case "values": return Object.values(d);
      case "get": return typeof args[0] === "string" && args[0] in d ? d[args[0]] : (args[1] ?? null);
    }
  } else if (Array.isArray(target)) {
    const l = target;
    switch (method) {
      case "count": return l.filter((x) => pyEquals(x, args[0])).length;
      case "index": {
        const i = l.findIndex((x) => pyEquals(x, args[0]));
        if (i < 0) throw new TemplateRenderError(`${pyStr(args[0])} is not in list`);
        return i;
      }
    }
  }
  throw new TemplateRenderError(`'${typeName(target)} object' has no attribute '${method}' (or the preview does not know it)`);
}

/** `obj.name` / `obj[key]`: jinja2 tries the item, then the attribute. */
function lookup(obj: unknown, key: unknown): unknown {
  obj = defined(obj);
  if (Array.isArray(obj) || typeof obj === "string") {
    const n = num(key);
    if (n !== null && Number.isInteger(n)) {
      const items = typeof obj === "string" ? [...obj] : obj;
      const i = n < 0 ? items.length + n : n;
      if (i >= 0 && i < items.length) return items[i];
      return new Undefined(`${typeName(obj)} object has no element ${n}`);
    }
  } else if (isMapping(obj) && typeof key === "string" && Object.prototype.hasOwnProperty.call(obj, key)) {
    return obj[key];
  }
  if (obj instanceof Loop && typeof key === "string" && key in obj.fields) return obj.fields[key];
  return new Undefined(`'${typeName(obj)} object' has no attribute ${typeof key === "string" ? `'${key}'` : pyStr(key)}`);
}

class Loop {
  constructor(readonly fields: Record<string, unknown>) {}
}

function arithmetic(op: string, a: unknown, b: unknown): unknown {
  a = defined(a);
  b = defined(b);
  const x = num(a);
  const y = num(b);
  if (x !== null && y !== null && typeof a !== "string" && typeof b !== "string") {
    const float = isFloat(a) || isFloat(b);
    const wrap = (n: number) => (float ? new PyFloat(n) : n);
    switch (op) {
      case "Add": return wrap(x + y);
      case "Sub": return wrap(x - y);
      case "Mul": return wrap(x * y);
      case "Div":
        if (y === 0) throw new TemplateRenderError("division by zero");
        return new PyFloat(x / y);
      case "FloorDiv":
        if (y === 0) throw new TemplateRenderError("integer division or modulo by zero");
        return wrap(Math.floor(x / y));
      case "Mod":
        if (y === 0) throw new TemplateRenderError("integer division or modulo by zero");
        return wrap(((x % y) + y) % y);
      case "Pow": return float || y < 0 ? new PyFloat(x ** y) : x ** y;
    }
  }
  if (op === "Add" && typeof a === "string" && typeof b === "string") return a + b;
  if (op === "Add" && Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
  if (op === "Mul" && (typeof a === "string" || Array.isArray(a)) && typeof b === "number") return typeof a === "string" ? a.repeat(Math.max(0, b)) : Array.from({ length: Math.max(0, b) }, () => a).flat();
  if (op === "Add" && typeof a === "string") throw new TemplateRenderError(`can only concatenate str (not "${typeName(b)}") to str`);
  const symbol = { Add: "+", Sub: "-", Mul: "*", Div: "/", FloorDiv: "//", Mod: "%", Pow: "**" }[op] ?? op;
  throw new TemplateRenderError(`unsupported operand type(s) for ${symbol}: '${typeName(a)}' and '${typeName(b)}'`);
}

function compare(type: string, a: unknown, b: unknown): boolean {
  a = defined(a);
  b = defined(b);
  switch (type) {
    case "==": case "===": return pyEquals(a, b);
    case "!=": case "!==": return !pyEquals(a, b);
    case "<": return pyCompare(a, b) < 0;
    case ">": return pyCompare(a, b) > 0;
    case "<=": return pyCompare(a, b) <= 0;
    case ">=": return pyCompare(a, b) >= 0;
  }
  throw new TemplateRenderError(`unknown comparison ${type}`);
}

export class Renderer {
  private readonly ctx: Context;
  constructor(row: Record<string, unknown>) {
    this.ctx = new Context(row);
  }

  render(node: TemplateNode): string {
    let out = "";
    for (const child of node.children ?? []) out += this.statement(child);
    return out;
  }

  private statement(node: TemplateNode): string {
    switch (node.typename) {
      case "NodeList":
      case "Root":
        return this.render(node);
      case "Output":
        return (node.children ?? []).map((c) => (c.typename === "TemplateData" ? String(c.value ?? "") : pyStr(this.expr(c)))).join("");
      case "If":
        if (truthy(this.expr(node.cond!))) return this.statement(node.body!);
        return node.else_ ? this.statement(node.else_) : "";
      case "For":
        return this.forLoop(node);
      case "Set": {
        const value = node.value ? this.expr(node.value as TemplateNode) : this.render((node.body as TemplateNode).body!);
        const targets = node.targets ?? [];
        if (targets.length === 1) this.ctx.set(String(targets[0]!.value), value);
        else {
          const items = iterate(value);
          if (items.length !== targets.length) throw new TemplateRenderError(`cannot unpack ${items.length} values into ${targets.length} names`);
          targets.forEach((t, i) => this.ctx.set(String(t.value), items[i]));
        }
        return "";
      }
      default:
        throw this.unsupported(node);
    }
  }

  private forLoop(node: TemplateNode): string {
    const items = iterate(this.expr(node.arr!));
    if (items.length === 0) return node.else_ ? this.statement(node.else_) : "";
    const names = node.name!.typename === "Array" ? node.name!.children!.map((c) => String(c.value)) : [String(node.name!.value)];
    return this.ctx.child(() => {
      let out = "";
      items.forEach((item, i) => {
        if (names.length === 1) this.ctx.set(names[0]!, item);
        else {
          const parts = iterate(item);
          if (parts.length !== names.length) throw new TemplateRenderError(`cannot unpack ${parts.length} values into ${names.length} names`);
          names.forEach((n, k) => this.ctx.set(n, parts[k]));
        }
        this.ctx.set("loop", new Loop({
          index: i + 1, index0: i, revindex: items.length - i, revindex0: items.length - i - 1,
          first: i === 0, last: i === items.length - 1, length: items.length,
          previtem: i > 0 ? items[i - 1] : new Undefined("there is no previous item"),
          nextitem: i < items.length - 1 ? items[i + 1] : new Undefined("there is no next item"),
        }));
        out += this.statement(node.body!);
      });
      return out;
    });
  }

  private args(node: TemplateNode | undefined): { args: unknown[]; kwargs: Kwargs } {
    const args: unknown[] = [];
    const kwargs: Kwargs = {};
    for (const child of node?.children ?? []) {
      if (child.typename === "KeywordArgs") {
        for (const pair of child.children ?? []) kwargs[String(pair.key!.value)] = this.expr(pair.value as TemplateNode);
      } else args.push(this.expr(child));
    }
    return { args, kwargs };
  }

  private expr(node: TemplateNode): unknown {
    switch (node.typename) {
      case "Literal":
        return node.value;
      case "Symbol":
        return this.ctx.get(String(node.value));
      case "Group":
        return this.expr(node.children![0]!);
      case "Array":
        return node.children!.map((c) => defined(this.expr(c)));
      case "Dict": {
        const out: Record<string, unknown> = {};
        for (const pair of node.children ?? []) out[pyStr(this.expr(pair.key!))] = defined(this.expr(pair.value as TemplateNode));
        return out;
      }
      case "LookupVal":
        return lookup(this.expr(node.target!), this.expr(node.val!));
      case "InlineIf":
        if (truthy(this.expr(node.cond!))) return this.expr(node.body!);
        return node.else_ ? this.expr(node.else_) : "";
      case "Or": {
        const left = this.expr(node.left!);
        return truthy(left) ? left : this.expr(node.right!);
      }
      case "And": {
        const left = this.expr(node.left!);
        return truthy(left) ? this.expr(node.right!) : left;
      }
      case "Not":
        return !truthy(this.expr(node.target!));
      case "Neg": {
        const v = defined(this.expr(node.target!));
        const n = num(v);
        if (n === null) throw new TemplateRenderError(`bad operand type for unary -: '${typeName(v)}'`);
        return v instanceof PyFloat ? new PyFloat(-n) : -n;
      }
      case "Pos":
        return defined(this.expr(node.target!));
      case "Add": case "Sub": case "Mul": case "Div": case "FloorDiv": case "Mod": case "Pow":
        return arithmetic(node.typename, this.expr(node.left!), this.expr(node.right!));
      case "Concat":
        return pyStr(this.expr(node.left!)) + pyStr(this.expr(node.right!));
      case "In":
        return contains(this.expr(node.right!), defined(this.expr(node.left!)));
      case "Compare": {
        let left = this.expr(node.expr!);
        for (const op of node.ops ?? []) {
          const right = this.expr(op.expr!);
          if (!compare(String(op.type), left, right)) return false;
          left = right;
        }
        return true;
      }
      case "Is":
        return this.test(node);
      case "Filter":
        return this.filter(node);
      case "FunCall":
        return this.call(node);
      default:
        throw this.unsupported(node);
    }
  }

  private test(node: TemplateNode): boolean {
    const right = node.right!;
    // `is none` / `is true` reach here as literals (nunjucks reads none, true and false as constants).
    const raw = right.typename === "FunCall" ? right.name!.value : right.value;
    const name = raw === null ? "none" : String(raw);
    const test = TESTS[name === "None" ? "none" : name === "True" ? "true" : name === "False" ? "false" : name];
    if (!test) throw new TemplateRenderError(`No test named '${name}'.`);
    const value = this.expr(node.left!);
    const { args } = right.typename === "FunCall" ? this.args(right.args) : { args: [] };
    if (name !== "defined" && name !== "undefined") defined(value);
    return test(value, args);
  }

  private filter(node: TemplateNode): unknown {
    const name = String(node.name!.value);
    const filter = FILTERS[name === "d" ? "default" : name === "count" ? "length" : name];
    if (!filter) throw new TemplateRenderError(`No filter named '${name}'.`);
    const { args, kwargs } = this.args(node.args);
    const [value, ...rest] = args;
    if (name !== "default" && name !== "d") defined(value);
    return filter(value, rest, kwargs);
  }

  private call(node: TemplateNode): unknown {
    const callee = node.name!;
    const { args, kwargs } = this.args(node.args);
    if (callee.typename === "LookupVal" && callee.val!.typename === "Literal") {
      return callMethod(this.expr(callee.target!), String(callee.val!.value), args.map(defined));
    }
    if (callee.typename === "Symbol" && CALLABLE_GLOBALS[String(callee.value)]) {
      return CALLABLE_GLOBALS[String(callee.value)]!(args.map(defined), kwargs);
    }
    const target = this.expr(callee);
    defined(target);
    throw new TemplateRenderError(`'${typeName(target)}' object is not callable`);
  }

  private unsupported(node: TemplateNode): TemplateRenderError {
    const what = node.typename.replace(/^FromImport$/, "from … import").toLowerCase();
    return new TemplateRenderError(`line ${node.lineno + 1}: the preview cannot show "${what}" tags; the run's jinja2 may still accept them`);
  }
}
