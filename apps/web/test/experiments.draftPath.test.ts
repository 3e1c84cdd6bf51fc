import { describe, expect, it } from "vitest";
import { getIn, listAt, setIn } from "../src/features/experiments/lib/draftPath";

describe("draft paths", () => {
  it("writes through arrays and objects without touching the original", () => {
    const draft = { actors: [{ name: "a", training: { learningRate: 1 } }, { name: "b" }] };
    const next = setIn(draft, "actors.0.training.learningRate", 0.5);
    expect(getIn(next, "actors.0.training.learningRate")).toBe(0.5);
    expect(getIn(draft, "actors.0.training.learningRate")).toBe(1);
    expect(next.actors[1]).toBe(draft.actors[1]);
  });
  it("creates missing containers and removes a key written as undefined", () => {
    expect(setIn({}, "trainer.steps", 3)).toEqual({ trainer: { steps: 3 } });
    expect(setIn({}, "tags.0", "x")).toEqual({ tags: ["x"] });
    expect(setIn({ trainer: { steps: 3, seed: 1 } }, "trainer.steps", undefined)).toEqual({ trainer: { seed: 1 } });
    expect(listAt({ actors: "nope" }, "actors")).toEqual([]);
  });
});
