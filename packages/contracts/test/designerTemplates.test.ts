import { describe, expect, it } from "vitest";
import { DESIGNER_TEMPLATES, ENVIRONMENT_KINDS, OUTCOME_ENVIRONMENT_KINDS, RunSpec } from "../src/index";

/** The designer's templates are complete specs (a person can launch one as it is), and the outcome kinds are listed once. */
describe("designer templates", () => {
  it("offers debate, majority vote, summary, a CORY pair, a proposer–solver pair and a self-play game", () => {
    expect(DESIGNER_TEMPLATES.map((t) => t.id)).toEqual(["debate", "majority_vote", "summary", "cory", "proposer_solver", "self_play_game"]);
  });

  for (const t of DESIGNER_TEMPLATES) {
    it(`${t.label} is a valid RunSpec with a one-line note`, () => {
      const parsed = RunSpec.safeParse(t.spec);
      expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
      expect(t.note.length).toBeGreaterThan(10);
      expect(t.note).not.toContain("\n");
    });
  }

  it("lists the outcome kinds among every environment kind", () => {
    for (const kind of OUTCOME_ENVIRONMENT_KINDS) expect(ENVIRONMENT_KINDS).toContain(kind);
    const summary = RunSpec.parse(DESIGNER_TEMPLATES.find((t) => t.id === "summary")!.spec);
    expect(summary.environments[0]!.summary).toEqual({ summariser: "lead", answerField: "answer", extract: "text", rewardWeights: { outcome: 1, own: 0.5 } });
  });
});
