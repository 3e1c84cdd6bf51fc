import type { Node } from "./ast";

/** Fewest and most turns a node can take. BigInt: nested repeats overflow 2^53 long before they are rejected. */
export interface TurnBounds {
  min: bigint;
  max: bigint;
}

export function turnBounds(node: Node): TurnBounds {
  switch (node.type) {
    case "actor":
    case "any":
    case "parallel": // every branch acts at the same single turn (validate checks the branches)
      return { min: 1n, max: 1n };
    case "sequence":
      return node.items.map(turnBounds).reduce((a, b) => ({ min: a.min + b.min, max: a.max + b.max }));
    case "choice": {
      const all = node.options.map((o) => turnBounds(o.node));
      return {
        min: all.reduce((m, b) => (b.min < m ? b.min : m), all[0]!.min),
        max: all.reduce((m, b) => (b.max > m ? b.max : m), all[0]!.max),
      };
    }
    case "repeat": {
      const body = turnBounds(node.body);
      return { min: BigInt(node.min) * body.min, max: BigInt(node.max) * body.max };
    }
  }
}
