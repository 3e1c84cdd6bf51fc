import { DEMO_SPEC } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { diffSpecs } from "../src/features/compare/lib/specDiff";

describe("diffSpecs", () => {
  it("lists every leaf path with each spec's value and marks the differing ones", () => {
    const a = { name: "a", trainer: { steps: 10, lr: 1e-5 }, actors: [{ model: "tiny" }], tags: [] };
    const b = { name: "b", trainer: { steps: 10, lr: 3e-5 }, actors: [{ model: "tiny" }, { model: "x" }], tags: [] };
    const rows = diffSpecs([a, b]);
    // RunSpec order (name, actors, trainer, tags; trainer.steps is a known field, lr is not).
    expect(rows).toEqual([
      { path: "name", values: ["a", "b"], differs: true },
      { path: "actors[0].model", values: ["tiny", "tiny"], differs: false },
      { path: "trainer.steps", values: [10, 10], differs: false },
      { path: "trainer.lr", values: [1e-5, 3e-5], differs: true },
      { path: "tags", values: [[], []], differs: false },
      { path: "actors[1].model", values: [undefined, "x"], differs: true },
    ]);
  });

  it("lists rows in the spec's own order whatever key order the stored specs come in", () => {
    const scrambled = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(scrambled) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, scrambled(x)])) : v;
    const other = { ...DEMO_SPEC, seed: 7, trainer: { ...DEMO_SPEC.trainer, steps: 5 } };
    const paths = diffSpecs([scrambled(DEMO_SPEC), scrambled(other)]).map((r) => r.path);
    expect(paths.slice(0, 5)).toEqual(["specVersion", "name", "description", "seed", "actors[0].name"]);
    expect(paths.indexOf("trainer.steps")).toBeLessThan(paths.indexOf("trainer.promptsPerStep"));
    expect(paths.at(-1)).toBe("tags[0]");
    expect(diffSpecs([scrambled(DEMO_SPEC), scrambled(other)]).filter((r) => r.differs).map((r) => r.path)).toEqual(["seed", "trainer.steps"]);
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
