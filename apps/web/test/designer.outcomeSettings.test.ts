import { DESIGNER_TEMPLATES, EnvironmentSpec, RunSpec } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { isOutcomeKind, withOutcomeSetting } from "../src/features/designer/lib/outcomeSettings";

/**
 * The majority_vote / summary settings form (OutcomeFields) edits the draft through withOutcomeSetting: what a
 * person sets lands at the contracts' field, a cleared field falls back to the default, and a template edited this
 * way is still a spec the contracts accept. (The browser path is e2e/tests/outcome-environments.spec.ts.)
 */
describe("outcome environment settings in the designer", () => {
  it("knows the outcome kinds and no others", () => {
    expect(["majority_vote", "summary"].every(isOutcomeKind)).toBe(true);
    expect(["collaborative", "parallel", "game"].some(isOutcomeKind)).toBe(false);
  });

  it("writes settings and weights at their fields and drops what is cleared", () => {
    let draft: Record<string, unknown> = { name: "vote", kind: "majority_vote", dataset: "words", actors: ["a", "b"] };
    draft = withOutcomeSetting(draft, "majority_vote", "extract", "text");
    draft = withOutcomeSetting(draft, "majority_vote", "own", 0.5, true);
    expect(draft.majorityVote).toEqual({ extract: "text", rewardWeights: { own: 0.5 } });
    expect(EnvironmentSpec.parse(draft).majorityVote).toEqual({ answerField: "answer", extract: "text", rewardWeights: { outcome: 1, own: 0.5 } });
    draft = withOutcomeSetting(draft, "majority_vote", "own", undefined, true);
    expect(draft.majorityVote).toEqual({ extract: "text" });
  });

  it("a summary template with a new summariser and weights is still a valid spec; a summariser who is not an actor is refused at its field", () => {
    const template = structuredClone(DESIGNER_TEMPLATES.find((t) => t.id === "summary")!.spec) as { environments: Record<string, unknown>[] };
    template.environments[0] = withOutcomeSetting(withOutcomeSetting(template.environments[0]!, "summary", "summariser", "s1"), "summary", "outcome", 2, true);
    const parsed = RunSpec.parse(template);
    expect(parsed.environments[0]!.summary).toMatchObject({ summariser: "s1", rewardWeights: { outcome: 2, own: 0.5 } });
    template.environments[0] = withOutcomeSetting(template.environments[0]!, "summary", "summariser", "nobody");
    const refused = RunSpec.safeParse(template);
    expect(refused.success).toBe(false);
    if (!refused.success) expect(refused.error.issues.map((i) => i.path.join("."))).toEqual(["environments.0.summary.summariser"]);
  });
});
