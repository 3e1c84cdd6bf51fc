import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues, type RunSpecInput } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/**
 * The outcome environments' rules (outcomeRules.ts) and dynamic sampling on conversations, through RunSpec, on
 * the cases the runtime's mirror (gpu-runtime/tests/test_outcome_rules.py) runs too.
 */
interface Case {
  name: string;
  extraActors?: number;
  algorithm?: Record<string, unknown>;
  environment?: Record<string, unknown>;
  noRewards?: boolean;
  issues: string[];
}

const CASES: Case[] = JSON.parse(readFileSync(resolve(__dirname, "../../../gpu-runtime/tests/fixtures/outcome_rules.cases.json"), "utf8")).cases;

function applyCase(c: Case): RunSpecInput {
  const s = structuredClone(DEMO_SPEC_INPUT) as unknown as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (let k = 0; k < (c.extraActors ?? 0); k++) s.actors.push({ ...structuredClone(s.actors[0]), name: `a${k + 2}` });
  s.algorithm = { ...s.algorithm, ...c.algorithm };
  s.environments[0] = { ...s.environments[0], ...c.environment };
  if (c.noRewards) {
    s.rewards = [];
    s.environments[0].rewards = [];
  }
  return s as RunSpecInput;
}

describe("outcome environment rules (majority_vote, summary) and dynamic sampling", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = RunSpec.safeParse(applyCase(c));
      const paths = parsed.success ? [] : fieldIssues(parsed.error).map((i) => i.path);
      expect(paths.sort()).toEqual([...c.issues].sort());
    });
  }

  it("fills the vote's defaults and names dynamic sampling's environment", () => {
    const ok = RunSpec.parse(applyCase(CASES[0]!));
    expect(ok.environments[0]!.kind).toBe("majority_vote");
    const withSettings = RunSpec.parse(applyCase({ ...CASES[0]!, environment: { ...CASES[0]!.environment, majorityVote: {} } }));
    expect(withSettings.environments[0]!.majorityVote).toEqual({ answerField: "answer", extract: "last_number", rewardWeights: { outcome: 1, own: 0 } });
    const parsed = RunSpec.safeParse(applyCase(CASES.find((c) => c.name === "dynamic sampling on a majority vote")!));
    expect(parsed.success).toBe(false);
    if (!parsed.success) {
      expect(fieldIssues(parsed.error)[0]!.message).toBe(
        "dynamic sampling resamples single-turn groups only, and environments.0 is a majority_vote environment (its episodes would not be resampled): turn it off, or train that environment in another run",
      );
    }
  });
});
