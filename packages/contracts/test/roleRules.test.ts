import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues, type RunSpecInput } from "../src/index";

/**
 * `environments[].roles` (roleRules.ts) through RunSpec, on the cases the runtime's mirror
 * (gpu-runtime/tests/test_role_rules.py) runs too.
 */
interface Case {
  name: string;
  environment?: Record<string, unknown>;
  algorithm?: Record<string, unknown>;
  trainer?: Record<string, unknown>;
  extraActors?: string[];
  datasetEvalFraction?: number;
  extraEnvironment?: Record<string, unknown>;
  extraDataset?: string;
  rewards?: boolean;
  issues: string[];
}

const FIXTURE = JSON.parse(readFileSync(resolve(__dirname, "../../../gpu-runtime/tests/fixtures/role_rules.cases.json"), "utf8"));
const CASES: Case[] = FIXTURE.cases;

type Doc = {
  actors: { name: string }[];
  datasets: { name: string; evalFraction?: number }[];
  rewards: unknown[];
  environments: Record<string, unknown>[];
  algorithm: object;
  trainer: object;
};

function applyCase(c: Case): RunSpecInput {
  const s = structuredClone(FIXTURE.selfplay) as Doc;
  const env = { ...s.environments[0]!, ...c.environment };
  for (const key of Object.keys(env)) if (env[key] === null) delete env[key];
  s.environments[0] = env;
  s.algorithm = { ...s.algorithm, ...c.algorithm };
  s.trainer = { ...s.trainer, ...c.trainer };
  for (const name of c.extraActors ?? []) s.actors.push({ ...s.actors[0]!, name });
  if (c.extraDataset) s.datasets.push({ ...s.datasets[0]!, name: c.extraDataset });
  if (c.extraEnvironment) s.environments.push(structuredClone(c.extraEnvironment));
  if (c.datasetEvalFraction !== undefined) s.datasets[0]!.evalFraction = c.datasetEvalFraction;
  if (c.rewards) {
    s.rewards = [{ name: "letter_match", source: { kind: "builtin", name: "letter_match" } }];
    env.rewards = [{ reward: "letter_match", weight: 1 }];
  }
  return s as unknown as RunSpecInput;
}

describe("environments[].roles", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = RunSpec.safeParse(applyCase(c));
      const paths = parsed.success ? [] : fieldIssues(parsed.error).map((i) => i.path);
      expect(paths.sort()).toEqual([...c.issues].sort());
    });
  }

  it("keeps the roles as written", () => {
    const parsed = RunSpec.parse(applyCase(CASES[0]!));
    expect(parsed.environments[0]!.roles).toEqual({ X: "policy", O: "policy" });
  });

  it("names the role and the missing actor", () => {
    const parsed = RunSpec.safeParse(applyCase(CASES.find((c) => c.name === "a role played by an unknown actor")!));
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(fieldIssues(parsed.error)).toEqual([{ path: "environments.0.roles.O", message: 'unknown actor "ghost": a role is played by one of actors[]' }]);
  });
});
