import type { Node } from "./ast";

/**
 * Canonical text for a tree: single spaces around `->`, `/`, `&`; choices always in
 * parentheses, weights written (on every option) only when some weight is not 1;
 * `x*3` / `x*(2..5)`; any actor as `*`, parenthesised when repeated (`(*)*3`). Other
 * parentheses only where the tree needs them. Comments are not part of the tree and are
 * dropped. parse(format(ast)) equals ast up to spans and ids (see astEqual).
 */
export function format(ast: Node): string {
  return render(ast, 0);
}

// Binding strength: a child looser than its slot needs parentheses.
const LEVEL: Record<Node["type"], number> = { sequence: 1, choice: 5, parallel: 3, repeat: 4, actor: 5, any: 5 };

function render(node: Node, slot: number): string {
  const text = bare(node);
  return LEVEL[node.type] < slot ? `(${text})` : text;
}

function bare(node: Node): string {
  switch (node.type) {
    case "actor":
      return node.name;
    case "any":
      return "*";
    case "sequence":
      // A nested sequence keeps its parentheses: the tree says it was grouped.
      return node.items.map((item) => render(item, 2)).join(" -> ");
    case "choice": {
      const weighted = node.options.some((o) => o.weight !== 1);
      const options = node.options.map((o) => render(o.node, 3) + (weighted ? `:${o.weight}` : ""));
      return `(${options.join(" / ")})`;
    }
    case "parallel":
      return node.branches.map((b) => render(b, 4)).join(" & ");
    case "repeat": {
      const body = node.body.type === "any" ? "(*)" : render(node.body, 4);
      const count = node.min === node.max ? `${node.min}` : `(${node.min}..${node.max})`;
      return `${body}*${count}`;
    }
  }
}
