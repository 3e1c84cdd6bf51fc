import type { Node } from "./ast";
import { normalizeActors } from "./actors";
import { turnBounds } from "./bounds";

export interface ActorStats {
  /** Fewest / most / expected times this actor acts in an episode (each place in a parallel turn counts once). */
  minTurns: number;
  maxTurns: number;
  expectedTurns: number;
}

export interface SpecStats {
  minTurns: number;
  maxTurns: number;
  expectedTurns: number;
  /** Most actors acting at one turn (1 without `&`): completions generated side by side. */
  maxActorsPerTurn: number;
  /** Every environment actor (in the given order), then any other name the spec uses. */
  actors: Record<string, ActorStats>;
}

interface Acc {
  min: bigint;
  max: bigint;
  expected: number;
}

/**
 * Exact statistics, computed from the tree (no sampling). Expectations follow from
 * linearity: a choice weighs its options by weight / total, a repeat multiplies its body
 * by the mean count (min + max) / 2 (counts are drawn independently of the body).
 * Min and max are exact integers; above 2^53 the returned numbers are rounded.
 */
export function stats(ast: Node, options: { actors: readonly string[] }): SpecStats {
  const actors = normalizeActors(options.actors);
  const perActor = actorTurns(ast, actors);
  const names = [...actors, ...[...perActor.keys()].filter((n) => !actors.includes(n))];
  const bounds = turnBounds(ast);
  const result: Record<string, ActorStats> = {};
  for (const name of names) {
    const acc = perActor.get(name) ?? { min: 0n, max: 0n, expected: 0 };
    result[name] = { minTurns: Number(acc.min), maxTurns: Number(acc.max), expectedTurns: acc.expected };
  }
  return {
    minTurns: Number(bounds.min),
    maxTurns: Number(bounds.max),
    expectedTurns: expectedTurns(ast),
    maxActorsPerTurn: maxActorsPerTurn(ast),
    actors: result,
  };
}

/** Expected number of turns. The Python port evaluates the same expressions in the same order. */
export function expectedTurns(node: Node): number {
  switch (node.type) {
    case "actor":
    case "any":
    case "parallel":
      return 1;
    case "sequence": {
      let total = 0;
      for (const item of node.items) total += expectedTurns(item);
      return total;
    }
    case "choice": {
      let weighted = 0;
      let weights = 0;
      for (const o of node.options) {
        weighted += o.weight * expectedTurns(o.node);
        weights += o.weight;
      }
      return weighted / weights;
    }
    case "repeat":
      return (expectedTurns(node.body) * (node.min + node.max)) / 2;
  }
}

function maxActorsPerTurn(node: Node): number {
  switch (node.type) {
    case "actor":
    case "any":
      return 1;
    case "parallel":
      return node.branches.reduce((sum, b) => sum + maxActorsPerTurn(b), 0);
    case "repeat":
      return maxActorsPerTurn(node.body);
    case "sequence":
      return Math.max(...node.items.map(maxActorsPerTurn));
    case "choice":
      return Math.max(...node.options.map((o) => maxActorsPerTurn(o.node)));
  }
}

/** Per-actor min / max / expected acts; an actor missing from the map never acts. */
function actorTurns(node: Node, actors: string[]): Map<string, Acc> {
  switch (node.type) {
    case "actor":
      return new Map([[node.name, { min: 1n, max: 1n, expected: 1 }]]);
    case "any": {
      const only = actors.length === 1 ? 1n : 0n;
      return new Map(actors.map((a) => [a, { min: only, max: 1n, expected: 1 / actors.length }]));
    }
    case "sequence":
      return node.items.map((item) => actorTurns(item, actors)).reduce(addMaps);
    case "parallel":
      return node.branches.map((b) => actorTurns(b, actors)).reduce(addMaps);
    case "repeat": {
      const body = actorTurns(node.body, actors);
      const out = new Map<string, Acc>();
      for (const [name, acc] of body) {
        out.set(name, {
          min: acc.min * BigInt(node.min),
          max: acc.max * BigInt(node.max),
          expected: (acc.expected * (node.min + node.max)) / 2,
        });
      }
      return out;
    }
    case "choice": {
      const parts = node.options.map((o) => actorTurns(o.node, actors));
      const names: string[] = [];
      for (const part of parts) for (const name of part.keys()) if (!names.includes(name)) names.push(name);
      let total = 0;
      for (const o of node.options) total += o.weight;
      const out = new Map<string, Acc>();
      for (const name of names) {
        const each = parts.map((p) => p.get(name) ?? { min: 0n, max: 0n, expected: 0 });
        let weighted = 0;
        each.forEach((acc, i) => (weighted += node.options[i]!.weight * acc.expected));
        out.set(name, {
          min: each.reduce((m, a) => (a.min < m ? a.min : m), each[0]!.min),
          max: each.reduce((m, a) => (a.max > m ? a.max : m), each[0]!.max),
          expected: weighted / total,
        });
      }
      return out;
    }
  }
}

function addMaps(a: Map<string, Acc>, b: Map<string, Acc>): Map<string, Acc> {
  const out = new Map(a);
  for (const [name, acc] of b) {
    const prev = out.get(name);
    out.set(name, prev ? { min: prev.min + acc.min, max: prev.max + acc.max, expected: prev.expected + acc.expected } : acc);
  }
  return out;
}
