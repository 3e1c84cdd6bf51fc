import type { Position, Span } from "./ast";
import { makeError, type DslError } from "./errors";

export type TokenKind =
  | "name"
  | "number"
  | "arrow" // ->
  | "slash" // /
  | "amp" // &
  | "star" // *  (any actor, or repetition after a subject)
  | "colon" // :
  | "dotdot" // ..
  | "lparen"
  | "rparen"
  | "eof";

export interface Token {
  kind: TokenKind;
  /** The source text (for numbers: exactly as written, so messages quote it verbatim). */
  text: string;
  span: Span;
}

/** Raised inside the lexer and parser; `parse` turns it into a result. */
export class SyntaxFailure extends Error {
  constructor(readonly error: DslError) {
    super(error.message);
  }
}

// Whitespace is this fixed set in both implementations (Unicode classes differ between JS and Python).
const WHITESPACE = new Set([" ", "\t", "\r", "\n", "\f", "\v", "\u00a0", "\ufeff"]);
const PUNCTUATION: Record<string, TokenKind> = { "/": "slash", "&": "amp", "*": "star", ":": "colon", "(": "lparen", ")": "rparen" };
const HINTS: Record<string, string> = {
  "|": 'did you mean "/" (choice)?',
  ",": 'did you mean "->" (sequence)?',
  ";": 'did you mean "->" (sequence)?',
  ">": 'did you mean "->"?',
  "=": 'did you mean "->"?',
  "-": 'did you mean "->"?',
  "\u2192": 'did you mean "->"?',
  "\u21d2": 'did you mean "->"?',
  "+": 'did you mean "&" (parallel)?',
  "\u00d7": 'did you mean "*" (repeat)?',
  "[": 'use "(" and ")" to group',
  "]": 'use "(" and ")" to group',
  "{": 'use "(" and ")" to group',
  "}": 'use "(" and ")" to group',
};

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isNameStart = (c: string | undefined) => c !== undefined && /^[A-Za-z_]$/.test(c);
const isNamePart = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9_.-]$/.test(c);

/** Quotes a character for a message: printable ASCII as is, anything else with its code point too. */
export function describeChar(c: string): string {
  const cp = c.codePointAt(0) ?? 0;
  if (cp >= 0x21 && cp <= 0x7e) return `"${c}"`;
  return `"${c}" (U+${cp.toString(16).toUpperCase().padStart(4, "0")})`;
}

/** Turns source text into tokens on demand, so the first error in source order is the one reported. */
export class Lexer {
  private readonly chars: string[];
  private i = 0;
  private line = 1;
  private column = 1;
  /** End of the last real token: where "unexpected end" errors point. */
  private lastEnd: Position = { offset: 0, line: 1, column: 1 };

  constructor(source: string) {
    // Iterate by code point so offsets and columns match Python's str indexing.
    this.chars = Array.from(source);
  }

  private position(): Position {
    return { offset: this.i, line: this.line, column: this.column };
  }

  private advance(): void {
    const c = this.chars[this.i++];
    if (c === "\n") {
      this.line += 1;
      this.column = 1;
    } else {
      this.column += 1;
    }
  }

  private skipTrivia(): void {
    for (;;) {
      const c = this.chars[this.i];
      if (c !== undefined && WHITESPACE.has(c)) this.advance();
      else if (c === "#") while (this.chars[this.i] !== undefined && this.chars[this.i] !== "\n") this.advance();
      else return;
    }
  }

  next(): Token {
    this.skipTrivia();
    const start = this.position();
    const c = this.chars[this.i];
    if (c === undefined) return { kind: "eof", text: "", span: { start: this.lastEnd, end: this.lastEnd } };
    const at = (k: number) => this.chars[this.i + k];
    let kind: TokenKind;
    if (c === "-" && at(1) === ">") {
      this.advance();
      this.advance();
      kind = "arrow";
    } else if (c === "." && at(1) === ".") {
      this.advance();
      this.advance();
      kind = "dotdot";
    } else if (isDigit(c) || (c === "-" && isDigit(at(1)))) {
      this.advance();
      while (isDigit(this.chars[this.i])) this.advance();
      // A fraction only when a digit follows the dot: `2..5` is a range, `2.5` a (rejected) decimal.
      if (this.chars[this.i] === "." && isDigit(at(1))) {
        this.advance();
        while (isDigit(this.chars[this.i])) this.advance();
      }
      kind = "number";
    } else if (isNameStart(c)) {
      this.advance();
      // `-` belongs to a name unless it starts an arrow: `Bob->Alice` is two names.
      while (isNamePart(this.chars[this.i]) && !(this.chars[this.i] === "-" && at(1) === ">")) this.advance();
      kind = "name";
    } else if (PUNCTUATION[c] !== undefined) {
      this.advance();
      kind = PUNCTUATION[c];
    } else {
      this.advance();
      const hint = HINTS[c];
      const message = `unexpected character ${describeChar(c)}` + (hint ? `; ${hint}` : "");
      throw new SyntaxFailure(makeError("unexpected_character", message, { start, end: this.position() }));
    }
    const end = this.position();
    this.lastEnd = end;
    return { kind, text: this.chars.slice(start.offset, end.offset).join(""), span: { start, end } };
  }
}
