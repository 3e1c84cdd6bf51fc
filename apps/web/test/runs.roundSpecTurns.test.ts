import { describe, expect, it } from "vitest";
import { excerpt, mapTurns, roundSpecsOf, turnsByNode, type TurnMessage } from "../src/features/runs/lib/roundSpecTurns";

/** A transcript as the runtime records it: a prompt, then each speaker's turn with its turn index. */
function transcript(...speakers: string[]): TurnMessage[] {
  return [
    { actor: "letters", role: "user", content: "say a:" },
    ...speakers.map((actor, turn) => ({ actor, role: "assistant", content: `${actor} says ${turn}`, turn, reward: 0.5, advantage: turn / 10 })),
  ];
}

/** Node id → the actor node's name, from the mapping's graph. */
function nameOf(graph: { nodes: { id: string; kind: string; name?: string }[] }, id: string): string {
  const n = graph.nodes.find((x) => x.id === id)!;
  return n.kind === "actor" ? n.name! : n.kind;
}

describe("mapTurns: a transcript on its round spec's graph", () => {
  it("maps a two-actor exchange turn by turn onto the designer's node ids", () => {
    const m = mapTurns("alice -> bob", transcript("alice", "bob"))!;
    expect(m.complete).toBe(true);
    expect(m.placed.map((p) => [p.turn, p.nodeId])).toEqual([
      [0, "n2"],
      [1, "n3"],
    ]);
    expect(m.placed.map((p) => p.message)).toEqual([1, 2]); // the prompt is message 0, not a turn
    expect(m.unplaced).toEqual([]);
  });

  it("maps repeats (a/b)*3 turn k to the node of the actor who spoke it", () => {
    const m = mapTurns("(a / b)*3", transcript("b", "a", "b"))!;
    expect(m.complete).toBe(true);
    // repeat n1 > choice n2 > a n3, b n4
    expect(m.placed.map((p) => p.nodeId)).toEqual(["n4", "n3", "n4"]);
    const byNode = turnsByNode(m);
    expect(byNode.get("n4")!.map((p) => p.turn)).toEqual([0, 2]);
    expect(byNode.get("n3")!.map((p) => p.turn)).toEqual([1]);
  });

  it("places every iteration of a repeated exchange on the same two nodes, then the closing speaker", () => {
    const m = mapTurns("(pro -> con)*2 -> judge", transcript("pro", "con", "pro", "con", "judge"))!;
    expect(m.complete).toBe(true);
    expect(m.placed.map((p) => nameOf(m.graph, p.nodeId))).toEqual(["pro", "con", "pro", "con", "judge"]);
    expect(turnsByNode(m).get(m.placed[0]!.nodeId)!.map((p) => p.turn)).toEqual([0, 2]);
  });

  it("chooses the repeat count the rest of the spec needs (a*(1..3) -> a -> b)", () => {
    const m = mapTurns("a*(1..3) -> a -> b", transcript("a", "a", "a", "b"))!;
    expect(m.complete).toBe(true);
    const [repeatA, closingA, b] = ["n3", "n4", "n5"];
    expect(m.placed.map((p) => p.nodeId)).toEqual([repeatA, repeatA, closingA, b]);
  });

  it("any actor (*) takes whoever spoke; a parallel turn takes one message per branch", () => {
    const m = mapTurns("* -> (x & y)", transcript("y", "x", "y"))!;
    expect(m.complete).toBe(true);
    expect(m.placed.map((p) => nameOf(m.graph, p.nodeId))).toEqual(["*", "x", "y"]);
  });

  it("a conversation cut short maps the turns it has; turns the spec cannot explain are unplaced", () => {
    const short = mapTurns("(alice -> bob)*3", transcript("alice", "bob", "alice"))!;
    expect(short.complete).toBe(false);
    expect(short.placed.map((p) => nameOf(short.graph, p.nodeId))).toEqual(["alice", "bob", "alice"]);
    expect(short.unplaced).toEqual([]);
    const odd = mapTurns("alice -> bob", transcript("alice", "carol", "bob"))!;
    expect(odd.placed.map((p) => nameOf(odd.graph, p.nodeId))).toEqual(["alice"]);
    expect(odd.unplaced).toEqual([2, 3]);
  });

  it("skips environment and system messages and refuses a spec that does not parse", () => {
    const messages: TurnMessage[] = [
      { actor: "a", role: "system", content: "be brief" },
      { actor: "a", role: "assistant", content: "move", turn: 0 },
      { actor: "board", role: "environment", content: "ok", turn: 1 },
      { actor: "b", role: "assistant", content: "move", turn: 2 },
    ];
    const m = mapTurns("a -> b", messages)!;
    expect(m.placed.map((p) => [p.message, p.turn])).toEqual([
      [1, 0],
      [3, 2],
    ]);
    expect(mapTurns("a -> (", messages)).toBeNull();
  });

  it("excerpts one line", () => {
    expect(excerpt("  hello\n  world  ")).toBe("hello world");
    expect(excerpt("")).toBe("(empty)");
    expect(excerpt("x".repeat(50), 10)).toBe("xxxxxxxxx…");
  });
});

describe("roundSpecsOf", () => {
  it("reads each environment's round spec from a frozen spec, skipping those without one", () => {
    expect(roundSpecsOf({ environments: [{ name: "relay", roundSpec: "alice -> bob" }, { name: "letters" }, { name: "x", roundSpec: " " }] })).toEqual({ relay: "alice -> bob" });
    expect(roundSpecsOf(null)).toEqual({});
  });
});
