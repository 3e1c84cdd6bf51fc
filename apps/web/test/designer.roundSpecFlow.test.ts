import { format, fromGraph, parse } from "@troupe/dsl";
import { describe, expect, it } from "vitest";
import { appendChild, emptyFlow, flowFromSpec, graphFromFlow } from "../src/features/designer/lib/roundSpecFlow";

function astOf(text: string) {
  const r = parse(text);
  if (!r.ok) throw new Error(r.errors[0]!.message);
  return r.ast;
}

describe("round-spec graph as drawn", () => {
  it.each(["Bob -> Alice -> (Bob/Alice)*5", "(A:3 / B) -> (A & B) -> A*(1..4)", "*"])("text → drawn graph → text keeps %s", (text) => {
    const flow = flowFromSpec(astOf(text));
    expect(format(fromGraph(graphFromFlow(flow.nodes, flow.edges)))).toBe(format(astOf(text)));
  });

  it("orders siblings by where they are drawn: dragging Alice above Bob swaps them", () => {
    const flow = flowFromSpec(astOf("Bob -> Alice -> Carol"));
    const alice = flow.nodes.find((n) => n.data.name === "Alice")!;
    const bob = flow.nodes.find((n) => n.data.name === "Bob")!;
    [alice.position, bob.position] = [bob.position, alice.position];
    expect(format(fromGraph(graphFromFlow(flow.nodes, flow.edges)))).toBe("Alice -> Bob -> Carol");
  });

  it("draws a spec from nothing by appending children; weights and ranges travel", () => {
    let flow = emptyFlow();
    const step = (parent: string, data: Parameters<typeof appendChild>[3]) => {
      const r = appendChild(flow.nodes, flow.edges, parent, data);
      if ("error" in r) throw new Error(r.error);
      flow = { nodes: r.nodes, edges: r.edges };
      return r.id;
    };
    const seq = step("start", { kind: "sequence" });
    step(seq, { kind: "actor", name: "Bob" });
    const rep = step(seq, { kind: "repeat", min: 2, max: 3 });
    const choice = step(rep, { kind: "choice" });
    step(choice, { kind: "actor", name: "Bob" });
    step(choice, { kind: "actor", name: "Alice" });
    flow.edges.find((e) => e.source === choice && flow.nodes.find((n) => n.id === e.target)?.data.name === "Alice")!.data.weight = 3;
    expect(format(fromGraph(graphFromFlow(flow.nodes, flow.edges)))).toBe("Bob -> (Bob:1 / Alice:3)*(2..3)");
  });

  it("refuses a second child under a repeat or any child under an actor, saying what to do", () => {
    const flow = flowFromSpec(astOf("A*3"));
    const repeat = flow.nodes.find((n) => n.data.kind === "repeat")!;
    const r = appendChild(flow.nodes, flow.edges, repeat.id, { kind: "actor", name: "B" });
    expect("error" in r && r.error).toMatch(/repeat node takes 1 child/);
    const actor = flow.nodes.find((n) => n.data.kind === "actor")!;
    const r2 = appendChild(flow.nodes, flow.edges, actor.id, { kind: "actor", name: "B" });
    expect("error" in r2 && r2.error).toMatch(/actor node has no children/);
  });
});

describe("the graph's selection survives the text redrawing it", () => {
  it("a selected node keeps its place in the tree when the ids change, so the next add goes under it", async () => {
    const { carrySelection, idAtPath, pathOf } = await import("../src/features/designer/lib/roundSpecFlow");
    // Drawn by hand: start → sequence(g2) → Bob, then a choice(g4) under the sequence, selected.
    let drawn = emptyFlow();
    const step = (parent: string, data: Parameters<typeof appendChild>[3]) => {
      const r = appendChild(drawn.nodes, drawn.edges, parent, data);
      if ("error" in r) throw new Error(r.error);
      drawn = { nodes: r.nodes, edges: r.edges };
      return r.id;
    };
    const seq = step("start", { kind: "sequence" });
    step(seq, { kind: "actor", name: "Bob" });
    const choice = step(seq, { kind: "choice" });
    step(choice, { kind: "actor", name: "Alice" });
    step(choice, { kind: "actor", name: "Bob" });
    expect(pathOf(drawn, choice)).toEqual([0, 1]);

    // The text syncs back: the dsl redraws the same tree with its own ids.
    const text = format(fromGraph(graphFromFlow(drawn.nodes, drawn.edges)));
    const rebuilt = flowFromSpec(astOf(text));
    const carried = carrySelection(drawn, rebuilt, choice);
    expect(carried).not.toBeNull();
    expect(carried).not.toBe("start");
    expect(rebuilt.nodes.find((n) => n.id === carried)?.data.kind).toBe("choice");
    expect(idAtPath(rebuilt, [0, 1])).toBe(carried);
    // "+ Repeat" under it works (under start it was refused: start takes one child).
    const added = appendChild(rebuilt.nodes, rebuilt.edges, carried!, { kind: "repeat", min: 1, max: 3 });
    expect("error" in added).toBe(false);
    expect("error" in appendChild(rebuilt.nodes, rebuilt.edges, "start", { kind: "repeat", min: 1, max: 3 })).toBe(true);
  });
});
