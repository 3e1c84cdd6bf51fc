/** fast-check generators of round-spec trees that satisfy the AST invariants (see ast.ts). */
import fc from "fast-check";
import type { Node } from "../src";

export const NAMES = ["A", "B", "Bob", "alice_2", "gpt-4.1", "x.y-z", "_"] as const;

const name = fc.oneof(
  fc.constantFrom(...NAMES),
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,6}$/).filter((s) => !s.includes("->")),
);

const leaf: fc.Arbitrary<Node> = fc.oneof(
  { weight: 4, arbitrary: name.map((n): Node => ({ type: "actor", name: n })) },
  { weight: 1, arbitrary: fc.constant<Node>({ type: "any" }) },
);

const bounds = fc
  .tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 3 }))
  .map(([min, extra]) => ({ min, max: Math.max(1, min + extra) }));
const weight = fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 9 }), fc.constant(1_000_000));

/** Any tree the parser could produce (parallel branches may be multi-turn: only validate rejects those). */
export const anyTree: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("node"), { minLength: 2, maxLength: 3 }).map((items): Node => ({ type: "sequence", items })),
    fc
      .array(fc.record({ node: tie("node"), weight }), { minLength: 2, maxLength: 3 })
      .map((options): Node => ({ type: "choice", options })),
    fc.array(tie("node"), { minLength: 2, maxLength: 3 }).map((branches): Node => ({ type: "parallel", branches })),
    fc.record({ body: tie("node"), b: bounds }).map(({ body, b }): Node => ({ type: "repeat", body, ...b })),
  ),
})).node;

/** A tree of exactly one turn: what a parallel branch must be. */
const oneTurn: fc.Arbitrary<Node> = fc.letrec<{ t: Node }>((tie) => ({
  t: fc.oneof(
    { depthSize: "small", maxDepth: 3 },
    leaf,
    fc.array(fc.record({ node: tie("t"), weight: fc.integer({ min: 1, max: 5 }) }), { minLength: 2, maxLength: 3 }).map((options): Node => ({ type: "choice", options })),
    fc.array(tie("t"), { minLength: 2, maxLength: 3 }).map((branches): Node => ({ type: "parallel", branches })),
    tie("t").map((body): Node => ({ type: "repeat", body, min: 1, max: 1 })),
  ),
})).t;

/** Trees that validate (given all their names as actors and a high enough maxTurns), except possibly zero_turns. */
export const sampleableTree: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", maxDepth: 4, withCrossShrink: true },
    leaf,
    fc.array(tie("node"), { minLength: 2, maxLength: 3 }).map((items): Node => ({ type: "sequence", items })),
    fc
      .array(fc.record({ node: tie("node"), weight: fc.integer({ min: 1, max: 5 }) }), { minLength: 2, maxLength: 3 })
      .map((options): Node => ({ type: "choice", options })),
    fc.array(oneTurn, { minLength: 2, maxLength: 3 }).map((branches): Node => ({ type: "parallel", branches })),
    fc.record({ body: tie("node"), b: bounds }).map(({ body, b }): Node => ({ type: "repeat", body, ...b })),
  ),
})).node;

/** Every actor name a tree mentions, in first-seen order. */
export function namesIn(node: Node, out: string[] = []): string[] {
  if (node.type === "actor" && !out.includes(node.name)) out.push(node.name);
  const kids = node.type === "sequence" ? node.items : node.type === "choice" ? node.options.map((o) => o.node) : node.type === "parallel" ? node.branches : node.type === "repeat" ? [node.body] : [];
  for (const kid of kids) namesIn(kid, out);
  return out;
}

/**
 * The bound every frequency test uses: a count of n draws with probability p is binomial,
 * standard deviation sqrt(n p (1 - p)); we accept |count - n p| <= 5 sd. A correct sampler
 * fails one such check with probability about 5.7e-7.
 */
export function withinFiveSigma(count: number, n: number, p: number): boolean {
  return Math.abs(count - n * p) <= 5 * Math.sqrt(n * p * (1 - p));
}
