import { describe, expect, it } from "vitest";
import { diffSpecs } from "../src/features/compare/lib/specDiff";

describe("diffSpecs", () => {
  it("lists every leaf path with each spec's value and marks the differing ones", () => {
    const a = { name: "a", trainer: { steps: 10, lr: 1e-5 }, actors: [{ model: "tiny" }], tags: [] };
    const b = { name: "b", trainer: { steps: 10, lr: 3e-5 }, actors: [{ model: "tiny" }, { model: "x" }], tags: [] };
    const rows = diffSpecs([a, b]);
    expect(rows).toEqual([
      { path: "actors[0].model", values: ["tiny", "tiny"], differs: false },
      { path: "name", values: ["a", "b"], differs: true },
      { path: "tags", values: [[], []], differs: false },
      { path: "trainer.lr", values: [1e-5, 3e-5], differs: true },
      { path: "trainer.steps", values: [10, 10], differs: false },
      { path: "actors[1].model", values: [undefined, "x"], differs: true },
    ]);
  });

  it("tells a number from a string and a missing key from null", () => {
    const rows = diffSpecs([{ seed: 1, x: null }, { seed: "1" }]);
    expect(rows.find((r) => r.path === "seed")?.differs).toBe(true);
    expect(rows.find((r) => r.path === "x")).toEqual({ path: "x", values: [null, undefined], differs: true });
  });

  it("finds no difference between equal specs, across any number of runs", () => {
    const s = { a: { b: [1, { c: 2 }] } };
    expect(diffSpecs([s, structuredClone(s), structuredClone(s)]).some((r) => r.differs)).toBe(false);
  });
});
