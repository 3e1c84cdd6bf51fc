import { describe, expect, it } from "vitest";
import { latestValues } from "../src/features/runs/lib/latestValues";

/** A chart of several lines heads each line's newest value, not only the first line's. */
describe("latestValues", () => {
  it("gives every line with points its last value, in order", () => {
    const out = latestValues([
      { label: "student", colour: "#111", points: [{ step: 1, value: 0.1 }, { step: 9, value: 0.3125 }] },
      { label: "coach", colour: "#222", points: [] },
      { label: "judge", colour: "#333", points: [{ step: 7, value: -2 }] },
    ]);
    expect(out.map((l) => [l.label, l.step])).toEqual([["student", 9], ["judge", 7]]);
    expect(out[0]!.text).toMatch(/^0\.31/);
    expect(out[1]!.text).toBe("-2");
  });
});
