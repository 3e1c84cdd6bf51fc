import { DEFAULT_MAX_TURNS, type Node } from "./ast";
import { normalizeActors } from "./actors";
import { turnBounds } from "./bounds";
import { NO_SPAN, makeError, type DslError } from "./errors";
import { didYouMean } from "./suggest";

export interface ValidateOptions {
  /** The environment's actor names; `*` draws from them in this order. */
  actors: readonly string[];
  /** Most turns an episode may take (default DEFAULT_MAX_TURNS). */
  maxTurns?: number;
}

/**
 * Checks a parsed spec against an environment. Errors come in a fixed order (the Python
 * port matches it): a pre-order walk of the tree (source order), then the turn-count
 * checks on the whole spec.
 */
export function validate(ast: Node, options: ValidateOptions): DslError[] {
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  if (!Number.isSafeInteger(maxTurns) || maxTurns < 1) throw new RangeError(`maxTurns must be a whole number >= 1, got ${maxTurns}`);
  const actors = normalizeActors(options.actors);
  const known = new Set(actors);
  const errors: DslError[] = [];

  // Errors come out in source order: a node's own problem before those inside it, left to right.
  const walk = (node: Node, path: number[]): void => {
    const span = node.span ?? NO_SPAN;
    switch (node.type) {
      case "actor":
        if (!known.has(node.name)) errors.push(makeError("unknown_actor", unknownActorMessage(node.name, actors), span, path));
        return;
      case "any":
        if (actors.length === 0) errors.push(makeError("no_actors", '"*" means any actor, but this environment has no actors', span, path));
        return;
      case "parallel":
        node.branches.forEach((branch, i) => {
          const { min, max } = turnBounds(branch);
          if (min !== 1n || max !== 1n) {
            const takes = min === max ? `${min} turns` : `${min} to ${max} turns`;
            const message = `each side of "&" must be exactly one turn; this one takes ${takes}`;
            errors.push(makeError("parallel_not_single_turn", message, branch.span ?? NO_SPAN, [...path, i]));
          }
          walk(branch, [...path, i]);
        });
        return;
      case "sequence":
        node.items.forEach((item, i) => walk(item, [...path, i]));
        return;
      case "choice":
        node.options.forEach((o, i) => walk(o.node, [...path, i]));
        return;
      case "repeat":
        walk(node.body, [...path, 0]);
        return;
    }
  };
  walk(ast, []);

  const { min, max } = turnBounds(ast);
  const rootSpan = ast.span ?? NO_SPAN;
  if (max > BigInt(maxTurns)) {
    errors.push(makeError("too_many_turns", `this spec can take up to ${max} turns, more than the maximum of ${maxTurns}`, rootSpan, []));
  }
  if (min === 0n) {
    errors.push(
      makeError("zero_turns", "this spec can produce an episode with no turns (when its optional parts repeat 0 times); make at least one turn certain", rootSpan, []),
    );
  }
  return errors;
}

function unknownActorMessage(name: string, actors: string[]): string {
  const guess = didYouMean(name, actors);
  if (guess !== undefined) return `unknown actor "${name}"; did you mean "${guess}"?`;
  if (actors.length === 0) return `unknown actor "${name}"; this environment has no actors`;
  return `unknown actor "${name}"; this environment's actors are ${actors.join(", ")}`;
}
