import { describe, expect, it } from "vitest";
import { GraphError, format, fromGraph, parse, toGraph, type Graph, type Node } from "../src";

function ast(text: string): Node {
  const result = parse(text);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.ast;
}

function graphOf(text: string): Graph {
  return JSON.parse(JSON.stringify(toGraph(ast(text)))) as Graph;
}

describe("toGraph", () => {
  it("draws start, actor, sequence, choice, repeat and parallel nodes with ordered, weighted edges", () => {
    const { nodes, edges } = toGraph(ast("Bob -> (Alice:2 / *)*(1..3) -> (Pro & Con)"));
    expect(nodes.map((n) => ({ ...n, span: undefined }))).toEqual([
      { id: "start", kind: "start", span: undefined },
      { id: "n1", kind: "sequence", span: undefined },
      { id: "n2", kind: "actor", name: "Bob", span: undefined },
      { id: "n3", kind: "repeat", min: 1, max: 3, span: undefined },
      { id: "n4", kind: "choice", span: undefined },
      { id: "n5", kind: "actor", name: "Alice", span: undefined },
      { id: "n6", kind: "actor", name: "*", span: undefined },
      { id: "n7", kind: "parallel", span: undefined },
      { id: "n8", kind: "actor", name: "Pro", span: undefined },
      { id: "n9", kind: "actor", name: "Con", span: undefined },
    ]);
    expect(edges).toEqual([
      { from: "start", to: "n1", order: 0 },
      { from: "n1", to: "n2", order: 0 },
      { from: "n1", to: "n3", order: 1 },
      { from: "n3", to: "n4", order: 0 },
      { from: "n4", to: "n5", order: 0, weight: 2 },
      { from: "n4", to: "n6", order: 1, weight: 1 },
      { from: "n1", to: "n7", order: 2 },
      { from: "n7", to: "n8", order: 0 },
      { from: "n7", to: "n9", order: 1 },
    ]);
  });

  it("keeps editor ids through a round trip and avoids clashing with them", () => {
    // An editor swapped the ids of A and B: both now differ from their canonical ids.
    const graph = graphOf("A -> B -> C");
    const swap = (id: string) => (id === "n2" ? "n3" : id === "n3" ? "n2" : id);
    graph.nodes = graph.nodes.map((n) => ({ ...n, id: swap(n.id) }));
    graph.edges = graph.edges.map((e) => ({ ...e, to: swap(e.to) }));
    const tree = fromGraph(graph);
    expect(tree.type === "sequence" && tree.items.map((i) => i.id)).toEqual(["n3", "n2", undefined]);
    expect(toGraph(tree)).toEqual(graph);
    expect(format(tree)).toBe("A -> B -> C");
    // A generated id never collides with an explicit one.
    const mixed: Node = { type: "sequence", items: [{ type: "actor", name: "A", id: "n3" }, { type: "actor", name: "B" }] };
    expect(toGraph(mixed).nodes.map((n) => n.id)).toEqual(["start", "n1", "n3", "n3'"]);
  });
});

describe("fromGraph rejects what is not a spec tree, naming the node", () => {
  const cases: [string, (g: Graph) => void, RegExp][] = [
    ["a missing start", (g) => void (g.nodes = g.nodes.filter((n) => n.kind !== "start")), /exactly one start node, found 0/],
    ["a start with another id", (g) => {
      g.nodes[0]!.id = "root";
      g.edges[0]!.from = "root";
    }, /start node's id must be "start"/],
    ["a node with two parents", (g) => void g.edges.push({ from: "n1", to: "n2", order: 3 }), /node "n2" must have exactly one parent, has 2/],
    ["an orphan", (g) => void g.nodes.push({ id: "lost", kind: "actor", name: "Z" }), /node "lost" must have exactly one parent, has 0/],
    ["a sequence with one child", (g) => {
      g.edges = g.edges.filter((e) => e.to !== "n3");
      g.nodes = g.nodes.filter((n) => n.id !== "n3");
    }, /node "n1" \(sequence\) needs at least 2 children, has 1/],
    ["a weight out of a sequence", (g) => void (g.edges[1]!.weight = 2), /only edges out of a choice carry a weight/],
    ["a gap in the child order", (g) => void (g.edges[2]!.order = 5), /child orders must be 0..1, found 0, 5/],
    ["a bad actor name", (g) => {
      const n = g.nodes[2]!;
      if (n.kind === "actor") n.name = "(Bob";
    }, /"\(Bob" is not a valid actor name/],
    ["an edge to a missing node", (g) => void (g.edges[2]!.to = "ghost"), /no node "ghost"/],
    ["an unknown kind", (g) => void ((g.nodes[1] as { kind: string }).kind = "loop"), /nodes.1.kind/],
  ];
  it.each(cases)("%s", (_name, breakIt, message) => {
    const graph = graphOf("A -> B");
    breakIt(graph);
    expect(() => fromGraph(graph)).toThrow(GraphError);
    expect(() => fromGraph(graph)).toThrow(message);
  });

  it("a cycle away from the start", () => {
    const graph = graphOf("A -> B");
    graph.nodes.push({ id: "x", kind: "repeat", min: 1, max: 1 }, { id: "y", kind: "repeat", min: 1, max: 1 });
    graph.edges.push({ from: "x", to: "y", order: 0 }, { from: "y", to: "x", order: 0 });
    expect(() => fromGraph(graph)).toThrow(/not reachable from start \(a cycle\?\): "x", "y"/);
  });

  it("a repeat whose range never repeats, and a tree deeper than 64", () => {
    const graph = graphOf("A*2");
    const repeat = graph.nodes[1]!;
    if (repeat.kind === "repeat") repeat.max = 0;
    expect(() => fromGraph(graph)).toThrow(/needs 0 <= min <= max and max >= 1/);
    let deep: Node = { type: "actor", name: "A" };
    for (let i = 0; i < 64; i++) deep = { type: "repeat", body: deep, min: 1, max: 1 };
    expect(() => fromGraph(toGraph(deep))).toThrow(/nested deeper than 64 levels/);
  });
});
