import type { Position, Span } from "./ast";

/**
 * Every problem a spec can have, as a closed set of kinds. The Python port
 * (`troupe.schedule`) uses the same kinds, messages and positions; the conformance suite
 * checks that they agree.
 */
export const SYNTAX_ERROR_KINDS = [
  "empty_spec",
  "unexpected_character",
  "unexpected_token",
  "unexpected_end",
  "unbalanced_paren",
  "empty_group",
  "repeat_without_subject",
  "bad_count",
  "bad_range",
  "bad_weight",
  "weight_outside_choice",
  "too_deeply_nested",
] as const;

export const VALIDATION_ERROR_KINDS = [
  "unknown_actor",
  "no_actors",
  "parallel_not_single_turn",
  "too_many_turns",
  "zero_turns",
] as const;

export const ERROR_KINDS = [...SYNTAX_ERROR_KINDS, ...VALIDATION_ERROR_KINDS] as const;
export type DslErrorKind = (typeof ERROR_KINDS)[number];

export interface DslError {
  kind: DslErrorKind;
  message: string;
  /** 1-based line and column (code points) of `span.start`, repeated for convenience. */
  line: number;
  column: number;
  span: Span;
  /** For errors found by `validate`: child indexes from the root to the node at fault (graph editors use it). */
  path?: number[];
}

/** Used for nodes built without a source position. */
export const NO_SPAN: Span = {
  start: { offset: 0, line: 1, column: 1 },
  end: { offset: 0, line: 1, column: 1 },
};

export function makeError(kind: DslErrorKind, message: string, span: Span = NO_SPAN, path?: number[]): DslError {
  const error: DslError = { kind, message, line: span.start.line, column: span.start.column, span };
  if (path) error.path = path;
  return error;
}

export function spanOf(start: Position, end: Position): Span {
  return { start, end };
}

/** Thrown by the functions that need a valid spec (`sample`, `parseOrThrow`, ...). */
export class DslSpecError extends Error {
  readonly errors: DslError[];
  constructor(errors: DslError[]) {
    super(errors.map((e) => `${e.line}:${e.column}: ${e.message} [${e.kind}]`).join("\n"));
    this.name = "DslSpecError";
    this.errors = errors;
  }
}
