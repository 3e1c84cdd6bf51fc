import { describe, expect, it } from "vitest";
import { DEMO_SPEC_INPUT, RATING_OPPONENTS, RatingsSpec, RunSpec } from "../src";

/** trainer.ratings: Elo per checkpoint in game environments (gpu-runtime troupe/ratings). */
describe("trainer.ratings", () => {
  it("fills its defaults, and stays absent when not given (older specs keep their shape)", () => {
    expect(RatingsSpec.parse({})).toEqual({ gamesPerPair: 8, opponents: ["random", "first_move"], snapshots: 3 });
    expect(RunSpec.parse(DEMO_SPEC_INPUT).trainer.ratings).toBeUndefined();
    expect(RATING_OPPONENTS).toEqual(["random", "first_move"]);
  });

  it.each([
    [{ gamesPerPair: -1 }, ["trainer", "ratings", "gamesPerPair"]],
    [{ opponents: ["grandmaster"] }, ["trainer", "ratings", "opponents", 0]],
    [{ snapshots: 100 }, ["trainer", "ratings", "snapshots"]],
    [{ every: 2 }, ["trainer", "ratings"]],
  ])("refuses %j at its field path", (ratings, path) => {
    const spec = structuredClone(DEMO_SPEC_INPUT) as { trainer: Record<string, unknown> };
    spec.trainer.ratings = ratings;
    const result = RunSpec.safeParse(spec);
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path)).toContainEqual(path);
  });
});
