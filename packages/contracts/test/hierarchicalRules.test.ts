import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ADVANTAGE_ESTIMATORS, ADVANTAGE_SUMMARIES, RunSpec, fieldIssues, type RunSpecInput } from "../src/index";

/**
 * hierarchical's rules (hierarchicalRules.ts) through RunSpec, on the cases the runtime's mirror
 * (gpu-runtime/tests/test_hierarchical_rules.py) runs too.
 */
interface Case {
  name: string;
  environment?: Record<string, unknown>;
  algorithm?: Record<string, unknown>;
  issues: string[];
}

const FIXTURE = JSON.parse(readFileSync(resolve(__dirname, "../../../gpu-runtime/tests/fixtures/hierarchical_rules.cases.json"), "utf8"));
const CASES: Case[] = FIXTURE.cases;

type Doc = { environments: Record<string, unknown>[]; algorithm: object };

function applyCase(c: Case): RunSpecInput {
  const s = structuredClone(FIXTURE.base) as Doc;
  const env = { ...s.environments[0]!, ...c.environment };
  for (const key of Object.keys(env)) if (env[key] === null) delete env[key];
  s.environments[0] = env;
  s.algorithm = { ...s.algorithm, ...c.algorithm };
  return s as unknown as RunSpecInput;
}

describe("hierarchical advantages (a proposer and a solver)", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = RunSpec.safeParse(applyCase(c));
      const paths = parsed.success ? [] : fieldIssues(parsed.error).map((i) => i.path);
      expect(paths.sort()).toEqual([...c.issues].sort());
    });
  }

  it("fills its settings by default and has a line saying what it does", () => {
    const parsed = RunSpec.parse(applyCase(CASES[0]!));
    expect(parsed.algorithm.hierarchical).toEqual({ proposer: "proposer", solver: "solver", solverSamples: 4, proposerReward: "learnability" });
    expect(ADVANTAGE_ESTIMATORS).toContain("hierarchical");
    expect(ADVANTAGE_SUMMARIES.hierarchical).toMatch(/proposer.*solve/i);
  });
});
