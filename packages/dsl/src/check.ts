import type { Node } from "./ast";
import { DslSpecError, type DslError } from "./errors";
import { parse } from "./parser";
import { validate, type ValidateOptions } from "./validate";

/** Parse and validate in one go: the syntax error, or every validation error, or none. */
export function check(source: string, options: ValidateOptions): { ast?: Node; errors: DslError[] } {
  const parsed = parse(source);
  if (!parsed.ok) return { errors: parsed.errors };
  return { ast: parsed.ast, errors: validate(parsed.ast, options) };
}

/** A valid tree or a DslSpecError carrying the errors. With no options, only the syntax is checked. */
export function compile(source: string, options?: ValidateOptions): Node {
  const parsed = parse(source);
  if (!parsed.ok) throw new DslSpecError(parsed.errors);
  const errors = options ? validate(parsed.ast, options) : [];
  if (errors.length > 0) throw new DslSpecError(errors);
  return parsed.ast;
}
