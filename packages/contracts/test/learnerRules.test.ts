import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues, type RunSpecInput } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/**
 * The offline learners' rules (learnerRules.ts) through RunSpec, on the cases the runtime's mirror
 * (gpu-runtime/tests/test_learner_rules.py) runs too.
 */
interface Case {
  name: string;
  algorithm?: Record<string, unknown>;
  environment?: Record<string, unknown>;
  actor?: Record<string, unknown> & { training?: Record<string, unknown> };
  datasetSource?: Record<string, unknown>;
  noRewards?: boolean;
  addTrainable?: boolean;
  extraEvalOnlyEnvironment?: boolean;
  trainer?: Record<string, unknown>;
  issues: string[];
}

const CASES: Case[] = JSON.parse(readFileSync(resolve(__dirname, "../../../gpu-runtime/tests/fixtures/learner_rules.cases.json"), "utf8")).cases;

export function applyCase(c: Case): RunSpecInput {
  const s = structuredClone(DEMO_SPEC_INPUT) as unknown as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  s.algorithm = { ...s.algorithm, ...c.algorithm };
  s.environments[0] = { ...s.environments[0], ...c.environment };
  const actor = s.actors[0];
  s.actors[0] = { ...actor, ...c.actor, training: { ...actor.training, ...c.actor?.training } };
  if (c.actor?.backend === "openai") delete s.actors[0].model.preset;
  if (c.datasetSource) s.datasets[0].source = c.datasetSource;
  if (c.noRewards) {
    s.rewards = [];
    s.environments[0].rewards = [];
  }
  if (c.extraEvalOnlyEnvironment) {
    s.datasets.push({ name: "exam", source: { kind: "builtin", name: "echo_letter" } });
    const { completionField: _c, chosenField: _h, rejectedField: _r, ...env } = structuredClone(s.environments[0]);
    s.environments.push({ ...env, name: "exam", dataset: "exam", evalOnly: true });
  }
  s.trainer = { ...s.trainer, ...c.trainer };
  if (c.addTrainable) s.actors.push({ ...structuredClone(actor), name: "spare" });
  return s as RunSpecInput;
}

describe("offline learner rules (sft, dpo)", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = RunSpec.safeParse(applyCase(c));
      const paths = parsed.success ? [] : fieldIssues(parsed.error).map((i) => i.path);
      expect(paths.sort()).toEqual([...c.issues].sort());
    });
  }

  it("names the missing preference columns and the builtin dataset", () => {
    const parsed = RunSpec.safeParse(applyCase(CASES.find((c) => c.name === "dpo without a preference dataset")!));
    expect(parsed.success).toBe(false);
    if (!parsed.success) {
      expect(fieldIssues(parsed.error)[0]!.message).toBe(
        'dpo trains on preference pairs (columns "chosen" and "rejected"), and builtin dataset "echo_letter" is not a preference dataset (columns: prompt, letter)',
      );
    }
  });

  it("fills the DPO defaults", () => {
    const parsed = RunSpec.parse(applyCase(CASES[3]!));
    expect(parsed.algorithm).toMatchObject({ name: "dpo", beta: 0.2, dpoLoss: "ipo", labelSmoothing: 0 });
    expect(RunSpec.parse(DEMO_SPEC_INPUT).algorithm).toMatchObject({ beta: 0.1, dpoLoss: "sigmoid" });
  });

  it("takes a model from another run's checkpoint", () => {
    const s = structuredClone(DEMO_SPEC_INPUT);
    s.actors[0]!.model = { source: "run", runId: "cm1abc", step: 40 };
    expect(RunSpec.parse(s).actors[0]!.model).toEqual({ source: "run", runId: "cm1abc", step: 40 });
    s.actors[0]!.model = { source: "run", runId: "../etc", step: 40 };
    const parsed = RunSpec.safeParse(s);
    expect(parsed.success ? [] : fieldIssues(parsed.error).map((i) => i.path)).toEqual(["actors.0.model.runId"]);
  });
});
