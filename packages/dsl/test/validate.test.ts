import { describe, expect, it } from "vitest";
import { DslSpecError, didYouMean, editDistance, parse, sample, validate, type Node } from "../src";

function ast(text: string): Node {
  const result = parse(text);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.ast;
}

describe("validate", () => {
  it("gives the path of the node at fault, for graph editors", () => {
    const errors = validate(ast("A -> (B / Zed) & C"), { actors: ["A", "B", "C"] });
    expect(errors.map((e) => [e.kind, e.path])).toEqual([["unknown_actor", [1, 0, 1]]]);
  });

  it("accepts a spec whose longest episode is exactly maxTurns", () => {
    expect(validate(ast("A*(1..4) -> B"), { actors: ["A", "B"], maxTurns: 5 })).toEqual([]);
    expect(validate(ast("A*(1..4) -> B"), { actors: ["A", "B"], maxTurns: 4 }).map((e) => e.kind)).toEqual(["too_many_turns"]);
  });

  it("rejects a maxTurns that is not a whole number >= 1", () => {
    expect(() => validate(ast("A"), { actors: ["A"], maxTurns: 0 })).toThrow(RangeError);
    expect(() => validate(ast("A"), { actors: ["A"], maxTurns: 2.5 })).toThrow(RangeError);
  });

  it("validates trees built in code (no spans) at 1:1", () => {
    const tree: Node = { type: "sequence", items: [{ type: "actor", name: "A" }, { type: "actor", name: "Q" }] };
    expect(validate(tree, { actors: ["A"] })).toMatchObject([{ kind: "unknown_actor", line: 1, column: 1, path: [1] }]);
  });
});

describe("did you mean", () => {
  it("counts a swap of neighbours as one edit", () => {
    expect(editDistance("bbo", "bob")).toBe(1);
    expect(editDistance("alcie", "alice")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });

  it("suggests within max(1, len/3) edits, case-insensitively, the earliest on ties", () => {
    expect(didYouMean("bob", ["Alice", "Bob"])).toBe("Bob");
    expect(didYouMean("Bo", ["Bob", "Bo1"])).toBe("Bob");
    expect(didYouMean("Zed", ["Bob", "Alice"])).toBeUndefined();
    expect(didYouMean("Judg", ["Judge", "Jury"])).toBe("Judge");
  });
});

describe("sample", () => {
  it("refuses an invalid spec with its errors", () => {
    expect(() => sample(ast("A -> B"), 0, { actors: ["A"] })).toThrow(DslSpecError);
  });

  it("refuses a seed outside [0, 2^64)", () => {
    expect(() => sample(ast("A"), -1, { actors: ["A"] })).toThrow(RangeError);
    expect(() => sample(ast("A"), 1n << 64n, { actors: ["A"] })).toThrow(RangeError);
    expect(() => sample(ast("A"), 0.5, { actors: ["A"] })).toThrow(RangeError);
  });

  it("gives a list of turns, several names for a parallel turn", () => {
    expect(sample(ast("(Pro & Con)*2 -> Judge"), 123, { actors: ["Pro", "Con", "Judge"] })).toEqual([["Pro", "Con"], ["Pro", "Con"], ["Judge"]]);
  });
});
