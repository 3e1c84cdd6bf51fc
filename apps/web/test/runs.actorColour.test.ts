import { describe, expect, it } from "vitest";
import { ACTOR_COLOURS, actorColour } from "../src/features/runs/lib/specNames";

describe("actorColour", () => {
  it("gives spec actors the colours in spec order, and actors outside the spec other, stable colours", () => {
    expect(actorColour(["alice", "bob"], "alice")).toBe(ACTOR_COLOURS[0]);
    expect(actorColour(["alice", "bob"], "bob")).toBe(ACTOR_COLOURS[1]);
    const judge = actorColour(["alice", "bob"], "judge");
    expect([ACTOR_COLOURS[0], ACTOR_COLOURS[1]]).not.toContain(judge);
    expect(actorColour(["alice", "bob"], "judge")).toBe(judge);
    // A run whose spec lists no actors still draws two actors in two colours.
    expect(actorColour([], "alice")).not.toBe(actorColour([], "bob"));
  });
});
