/**
 * The round-spec syntax tree. The tree mirrors the text's structure exactly: parentheses
 * make no node of their own, but a parenthesised sequence inside a sequence stays nested
 * (`(A -> B) -> C`), so every tree the parser can build formats back to itself.
 *
 * Invariants (the parser and `fromGraph` guarantee them; `format` relies on them):
 * sequence, choice and parallel have at least two children; repeat bounds are whole numbers
 * with 0 <= min <= max, 1 <= max <= MAX_COUNT; weights are whole numbers 1..MAX_WEIGHT;
 * actor names match ACTOR_NAME; the tree is at most MAX_DEPTH deep.
 */

/** A point in the source. `offset` counts Unicode code points from 0; line and column are 1-based, column in code points. */
export interface Position {
  offset: number;
  line: number;
  column: number;
}

/** A source range; `end` is exclusive. */
export interface Span {
  start: Position;
  end: Position;
}

interface NodeBase {
  /** Where the node was written; absent on trees built in code or from a graph without spans. */
  span?: Span;
  /** Editor identity from the graph form (see graph.ts); the parser never sets it. */
  id?: string;
}

export interface ActorNode extends NodeBase {
  type: "actor";
  name: string;
}

/** `*`: one actor drawn uniformly from the environment's actors. */
export interface AnyActorNode extends NodeBase {
  type: "any";
}

export interface SequenceNode extends NodeBase {
  type: "sequence";
  items: Node[];
}

export interface ChoiceOption {
  node: Node;
  /** Relative weight; 1 when the text gives none. */
  weight: number;
}

export interface ChoiceNode extends NodeBase {
  type: "choice";
  options: ChoiceOption[];
}

/** `a & b`: every branch acts at the same turn; the turn lists their actors in spec order. */
export interface ParallelNode extends NodeBase {
  type: "parallel";
  branches: Node[];
}

/** `x*3` is min = max = 3; `x*(2..5)` draws the count uniformly from min..max inclusive. */
export interface RepeatNode extends NodeBase {
  type: "repeat";
  body: Node;
  min: number;
  max: number;
}

export type Node = ActorNode | AnyActorNode | SequenceNode | ChoiceNode | ParallelNode | RepeatNode;

/** A schedule: one entry per turn, each the actors acting at that turn (several for a parallel turn). */
export type Schedule = string[][];

export const ACTOR_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
export const MAX_COUNT = 1_000_000;
export const MAX_WEIGHT = 1_000_000;
/** Deepest tree (and most nested parentheses) a spec may have: keeps every recursive walk far from stack limits. */
export const MAX_DEPTH = 64;
/** Used when no maximum is given; the RunSpec's own ceiling for an environment's maxTurns. */
export const DEFAULT_MAX_TURNS = 1024;

/** The children of a node, in spec order (choice options without their weights). */
export function childrenOf(node: Node): Node[] {
  switch (node.type) {
    case "actor":
    case "any":
      return [];
    case "sequence":
      return node.items;
    case "choice":
      return node.options.map((o) => o.node);
    case "parallel":
      return node.branches;
    case "repeat":
      return [node.body];
  }
}

/** A copy without `span` and `id`: what "the same tree" means for format/parse round trips. */
export function stripMeta(node: Node): Node {
  switch (node.type) {
    case "actor":
      return { type: "actor", name: node.name };
    case "any":
      return { type: "any" };
    case "sequence":
      return { type: "sequence", items: node.items.map(stripMeta) };
    case "choice":
      return { type: "choice", options: node.options.map((o) => ({ node: stripMeta(o.node), weight: o.weight })) };
    case "parallel":
      return { type: "parallel", branches: node.branches.map(stripMeta) };
    case "repeat":
      return { type: "repeat", body: stripMeta(node.body), min: node.min, max: node.max };
  }
}

/** Structural equality ignoring `span` and `id` (nothing else). */
export function astEqual(a: Node, b: Node): boolean {
  return JSON.stringify(stripMeta(a)) === JSON.stringify(stripMeta(b));
}
