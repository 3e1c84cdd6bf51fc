import { DEMO_SPEC_INPUT, MULTI_AGENT_DEMO_SPEC_INPUT, RunSpec } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { actorRewards, klOffActors } from "../src/features/runs/lib/rewardSummary";

describe("the run header's reward: smoothed, per actor, named", () => {
  it("one value per actor, the newest smoothed (a noisy last step does not take over)", () => {
    const steps = (values: number[]) => values.map((value, i) => ({ step: i + 1, value }));
    const rewards = actorRewards([
      { actor: "Alice", points: steps([0.5, 0.5, 0.5, 0.5, 0.0]) },
      { actor: "Bob", points: steps([0.1, 0.2]) },
      { actor: "Carol", points: [] },
    ]);
    expect(rewards.map((r) => r.actor)).toEqual(["Alice", "Bob"]);
    const alice = rewards[0]!;
    expect(alice.last).toBe(0);
    expect(alice.step).toBe(5);
    expect(alice.smoothed).toBeGreaterThan(0.3); // not the one noisy 0.0
    expect(alice.smoothed).toBeLessThan(0.5);
    expect(rewards[1]!.smoothed).toBeGreaterThan(0.1);
    expect(rewards[1]!.smoothed).toBeLessThan(0.2);
  });
});

describe("which actors train without a KL penalty", () => {
  it("names the trainable local actors whose klBeta is 0", () => {
    const demo = RunSpec.parse(DEMO_SPEC_INPUT);
    expect(klOffActors(demo)).toEqual(demo.actors.filter((a) => a.trainable && a.training.klBeta === 0).map((a) => a.name));
    const withKl = RunSpec.parse({ ...DEMO_SPEC_INPUT, actors: DEMO_SPEC_INPUT.actors.map((a) => ({ ...a, training: { ...(a as { training?: object }).training, klBeta: 0.05 } })) });
    expect(klOffActors(withKl)).toEqual([]);
    const multi = RunSpec.parse(MULTI_AGENT_DEMO_SPEC_INPUT);
    expect(klOffActors(multi).every((n) => multi.actors.some((a) => a.name === n && a.trainable))).toBe(true);
  });
});
