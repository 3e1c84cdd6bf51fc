import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ALGORITHM_SUMMARIES, GRPO_FAMILY, RunSpec, fieldIssues, type RunSpecInput } from "../src/index";

/**
 * cory's rules (coryRules.ts) through RunSpec, on the cases the runtime's mirror (gpu-runtime/tests/test_cory_rules.py)
 * runs too.
 */
interface Case {
  name: string;
  environment?: Record<string, unknown>;
  algorithm?: Record<string, unknown>;
  secondActor?: Record<string, unknown>;
  issues: string[];
}

const FIXTURE = JSON.parse(readFileSync(resolve(__dirname, "../../../gpu-runtime/tests/fixtures/cory_rules.cases.json"), "utf8"));
const CASES: Case[] = FIXTURE.cases;

type Doc = { actors: Record<string, unknown>[]; environments: Record<string, unknown>[]; algorithm: object };

function applyCase(c: Case): RunSpecInput {
  const s = structuredClone(FIXTURE.pair) as Doc;
  const env = { ...s.environments[0]!, ...c.environment };
  for (const key of Object.keys(env)) if (env[key] === null) delete env[key];
  s.environments[0] = env;
  s.algorithm = { ...s.algorithm, ...c.algorithm };
  s.actors[1] = { ...s.actors[1]!, ...c.secondActor };
  return s as unknown as RunSpecInput;
}

describe("cory (a pioneer and an observer exchanging roles)", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = RunSpec.safeParse(applyCase(c));
      const paths = parsed.success ? [] : fieldIssues(parsed.error).map((i) => i.path);
      expect(paths.sort()).toEqual([...c.issues].sort());
    });
  }

  it("is a GRPO-family learner with a swap period by default and a line saying what it does", () => {
    const parsed = RunSpec.parse({ ...applyCase(CASES[0]!), algorithm: { name: "cory" } });
    expect(parsed.algorithm.cory).toEqual({ swapEvery: 10 });
    expect(GRPO_FAMILY).toContain("cory");
    expect(ALGORITHM_SUMMARIES.cory).toMatch(/pioneer.*observer/);
  });
});
