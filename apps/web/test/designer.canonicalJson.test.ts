import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/features/designer/hooks/useDraft";

describe("canonicalJson (the draft's dirty check)", () => {
  it("ignores key order at every depth, as Postgres jsonb does when it stores a spec", () => {
    const typed = { algorithm: { hierarchical: { proposer: "p", solver: "s", proposerReward: "frontier", solverSamples: 2 } }, name: "x" };
    const stored = { name: "x", algorithm: { hierarchical: { solver: "s", proposer: "p", solverSamples: 2, proposerReward: "frontier" } } };
    expect(JSON.stringify(typed)).not.toBe(JSON.stringify(stored));
    expect(canonicalJson(typed)).toBe(canonicalJson(stored));
  });

  it("still tells a real edit, and keeps array order", () => {
    expect(canonicalJson({ a: { b: 1 } })).not.toBe(canonicalJson({ a: { b: 2 } }));
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
    expect(canonicalJson({ a: null, b: [{ y: 1, x: 2 }] })).toBe(canonicalJson({ b: [{ x: 2, y: 1 }], a: null }));
  });
});
