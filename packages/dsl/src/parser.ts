/**
 * Recursive-descent parser. Grammar (loosest first; see README.md for the EBNF):
 *   spec     = sequence EOF
 *   sequence = choice { "->" choice }
 *   choice   = weighted { "/" weighted }          (a weight only where a "/" follows or precedes)
 *   weighted = parallel [ ":" WHOLE ]
 *   parallel = postfix { "&" postfix }
 *   postfix  = primary { "*" count }
 *   count    = WHOLE | "(" WHOLE ".." WHOLE ")"
 *   primary  = NAME | "*" | "(" sequence ")"
 * Stops at the first error; the Python port follows this file step by step.
 */
import { MAX_COUNT, MAX_DEPTH, MAX_WEIGHT, type Node, type Position, type Span } from "./ast";
import { makeError, type DslError, type DslErrorKind } from "./errors";
import { Lexer, SyntaxFailure, type Token, type TokenKind } from "./lexer";

export type ParseResult = { ok: true; ast: Node } | { ok: false; errors: DslError[] };

/** A parsed piece with its full extent, parentheses included (node spans exclude them). */
interface Parsed {
  node: Node;
  start: Position;
  end: Position;
  /** Height of the tree below and including `node`. */
  depth: number;
}

const TOKEN_WORDS: Partial<Record<TokenKind, string>> = {
  arrow: '"->"',
  slash: '"/"',
  amp: '"&"',
  star: '"*"',
  colon: '":"',
  dotdot: '".."',
  lparen: '"("',
  rparen: '")"',
  eof: "the end of the spec",
};

function describe(token: Token): string {
  if (token.kind === "name") return `actor "${token.text}"`;
  if (token.kind === "number") return `number "${token.text}"`;
  return TOKEN_WORDS[token.kind] ?? token.kind;
}

function fail(kind: DslErrorKind, message: string, span: Span): never {
  throw new SyntaxFailure(makeError(kind, message, span));
}

const WHOLE = /^[0-9]+$/;

class Parser {
  private readonly lexer: Lexer;
  private readonly buffer: Token[] = [];
  /** Open parentheses around the current position; bounded so deep input cannot overflow the stack (Python's especially). */
  private openGroups = 0;

  constructor(source: string) {
    this.lexer = new Lexer(source);
  }

  private peek(k = 0): Token {
    while (this.buffer.length <= k) this.buffer.push(this.lexer.next());
    return this.buffer[k]!;
  }

  private take(): Token {
    const token = this.peek();
    this.buffer.shift();
    return token;
  }

  spec(): Node {
    const first = this.peek();
    if (first.kind === "eof") fail("empty_spec", "the spec is empty; write at least one actor, like Bob -> Alice", first.span);
    const parsed = this.sequence("at the start of the spec");
    const next = this.peek();
    if (next.kind === "rparen") fail("unbalanced_paren", 'this ")" has no matching "("', next.span);
    if (next.kind !== "eof") this.unexpectedAfter(next, "the end of the spec");
    return parsed.node;
  }

  /** A token that cannot continue an expression; `closer` names what could have come instead. */
  private unexpectedAfter(token: Token, closer: string): never {
    let hint = "";
    if (token.kind === "name" || token.kind === "lparen") hint = '; did you forget "->"?';
    if (token.kind === "number") hint = `; did you mean "*${token.text}"?`;
    fail("unexpected_token", `expected "->", "/", "&", "*" or ${closer}, found ${describe(token)}${hint}`, token.span);
  }

  private sequence(context: string): Parsed {
    const items = [this.choice(context)];
    while (this.peek().kind === "arrow") {
      this.take();
      items.push(this.choice('after "->"'));
    }
    if (items.length === 1) return items[0]!;
    return this.group({ type: "sequence", items: items.map((p) => p.node) }, items);
  }

  private choice(context: string): Parsed {
    const first = this.weighted(context);
    if (this.peek().kind !== "slash") {
      if (first.colon) this.weightOutsideChoice(first.colon, first.weightText);
      return first.parsed;
    }
    const options = [first];
    while (this.peek().kind === "slash") {
      this.take();
      options.push(this.weighted('after "/"'));
    }
    const node: Node = {
      type: "choice",
      options: options.map((o) => ({ node: o.parsed.node, weight: o.weight })),
    };
    return this.group(node, options.map((o) => o.parsed));
  }

  private weightOutsideChoice(colon: Token, weightText: string): never {
    fail(
      "weight_outside_choice",
      `a weight (":${weightText}") only applies to an alternative of a choice, like (A:3 / B:1)`,
      colon.span,
    );
  }

  private weighted(context: string): { parsed: Parsed; weight: number; colon?: Token; weightText: string } {
    const parsed = this.parallel(context);
    if (this.peek().kind !== "colon") return { parsed, weight: 1, weightText: "" };
    const colon = this.take();
    const token = this.peek();
    if (token.kind !== "number") {
      fail("bad_weight", `expected a weight after ":", like (A:3 / B:1), found ${describe(token)}`, token.span);
    }
    this.take();
    if (!WHOLE.test(token.text) || Number(token.text) < 1 || Number(token.text) > MAX_WEIGHT) {
      fail("bad_weight", `a weight must be a whole number from 1 to ${MAX_WEIGHT}, found "${token.text}"`, token.span);
    }
    const after = this.peek();
    if (after.kind === "star" || after.kind === "amp") {
      fail("unexpected_token", `${describe(after)} cannot follow a weight; write the weight last, like (A*2:3 / B)`, after.span);
    }
    return { parsed, weight: Number(token.text), colon, weightText: token.text };
  }

  private parallel(context: string): Parsed {
    const branches = [this.postfix(context)];
    while (this.peek().kind === "amp") {
      this.take();
      branches.push(this.postfix('after "&"'));
    }
    if (branches.length === 1) return branches[0]!;
    return this.group({ type: "parallel", branches: branches.map((p) => p.node) }, branches);
  }

  private postfix(context: string): Parsed {
    let parsed = this.primary(context);
    while (this.peek().kind === "star") {
      this.take();
      const { min, max, end } = this.count();
      const node: Node = { type: "repeat", body: parsed.node, min, max, span: { start: parsed.start, end } };
      parsed = this.checkDepth({ node, start: parsed.start, end, depth: parsed.depth + 1 });
    }
    return parsed;
  }

  private count(): { min: number; max: number; end: Position } {
    const token = this.peek();
    if (token.kind === "number") {
      this.take();
      const n = this.whole(token, "bad_count", "a repeat count", 1);
      return { min: n, max: n, end: token.span.end };
    }
    if (token.kind !== "lparen") {
      fail("bad_count", `expected a count after "*", like *3 or *(2..5), found ${describe(token)}`, token.span);
    }
    const open = this.take();
    const lo = this.rangePart("number");
    this.rangePart("dotdot");
    const hi = this.rangePart("number");
    const close = this.rangePart("rparen");
    const min = this.whole(lo, "bad_range", "a range bound", 0);
    const max = this.whole(hi, "bad_range", "a range bound", 0);
    const span = { start: open.span.start, end: close.span.end };
    if (min > max) {
      fail("bad_range", `the range *(${lo.text}..${hi.text}) is empty: its lower bound is greater than its upper bound`, span);
    }
    if (max === 0) fail("bad_range", `the range *(${lo.text}..${hi.text}) always repeats 0 times`, span);
    return { min, max, end: close.span.end };
  }

  private rangePart(kind: TokenKind): Token {
    const token = this.peek();
    if (token.kind !== kind) {
      fail("bad_range", `expected a range like *(2..5), found ${describe(token)}`, token.span);
    }
    return this.take();
  }

  /** A whole number in [least, MAX_COUNT] written exactly as digits. */
  private whole(token: Token, kind: DslErrorKind, what: string, least: number): number {
    const text = token.text;
    if (!WHOLE.test(text)) {
      const problem = text.startsWith("-") ? `at least ${least}` : "a whole number";
      fail(kind, `${what} must be ${problem}, found "${text}"`, token.span);
    }
    const value = Number(text);
    if (value < least) {
      const hint = kind === "bad_count" ? "; use *(0..n) for an optional part" : "";
      fail(kind, `${what} must be at least ${least}, found "${text}"${hint}`, token.span);
    }
    if (value > MAX_COUNT) fail(kind, `${what} must be at most ${MAX_COUNT}, found "${text}"`, token.span);
    return value;
  }

  private primary(context: string): Parsed {
    const token = this.peek();
    if (token.kind === "name") {
      this.take();
      return { node: { type: "actor", name: token.text, span: token.span }, ...token.span, depth: 1 };
    }
    if (token.kind === "star") {
      const after = this.peek(1);
      if (after.kind === "number" || after.kind === "lparen") {
        fail(
          "repeat_without_subject",
          '"*" here repeats nothing; put the actor or group before it, like Bob*3 or (Bob -> Alice)*3',
          token.span,
        );
      }
      this.take();
      return { node: { type: "any", span: token.span }, ...token.span, depth: 1 };
    }
    if (token.kind === "lparen") {
      const open = this.take();
      if (this.openGroups >= MAX_DEPTH) fail("too_deeply_nested", `too deeply nested: at most ${MAX_DEPTH} levels`, open.span);
      if (this.peek().kind === "rparen") {
        const close = this.take();
        fail("empty_group", 'empty group "()"; put at least one actor inside', { start: open.span.start, end: close.span.end });
      }
      this.openGroups += 1;
      const inner = this.sequence('after "("');
      this.openGroups -= 1;
      const next = this.peek();
      if (next.kind === "eof") fail("unbalanced_paren", 'this "(" is never closed', open.span);
      if (next.kind !== "rparen") this.unexpectedAfter(next, '")"');
      const close = this.take();
      return { node: inner.node, start: open.span.start, end: close.span.end, depth: inner.depth };
    }
    const kind = token.kind === "eof" ? "unexpected_end" : "unexpected_token";
    fail(kind, `expected an actor, "*" or "(" ${context}, found ${describe(token)}`, token.span);
  }

  /** Builds an n-ary node whose span runs from its first part to its last. */
  private group(node: Node, parts: Parsed[]): Parsed {
    const start = parts[0]!.start;
    const end = parts[parts.length - 1]!.end;
    node.span = { start, end };
    return this.checkDepth({ node, start, end, depth: 1 + Math.max(...parts.map((p) => p.depth)) });
  }

  private checkDepth(parsed: Parsed): Parsed {
    if (parsed.depth > MAX_DEPTH) {
      fail("too_deeply_nested", `too deeply nested: at most ${MAX_DEPTH} levels`, { start: parsed.start, end: parsed.end });
    }
    return parsed;
  }
}

/** Parses a round spec. Never throws for bad text: errors come back as typed values. */
export function parse(source: string): ParseResult {
  try {
    return { ok: true, ast: new Parser(source).spec() };
  } catch (e) {
    if (e instanceof SyntaxFailure) return { ok: false, errors: [e.error] };
    throw e;
  }
}
