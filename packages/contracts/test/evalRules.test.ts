import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues, type RunSpecInput } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/**
 * Eval-only environments and eval-only runs (evalRules.ts), through RunSpec. The runtime's mirror
 * (gpu-runtime/tests/test_eval_rules.py) runs the same cases.
 */
function spec(change: (s: RunSpecInput) => void): RunSpecInput {
  const s = structuredClone(DEMO_SPEC_INPUT);
  s.datasets.push({ name: "held", source: { kind: "huggingface", id: "openai/gsm8k", config: "main", split: "test" } });
  s.environments.push({ ...s.environments[0]!, name: "exam", dataset: "held", evalOnly: true });
  s.trainer = { ...s.trainer, evalEvery: 10 };
  change(s);
  return s;
}

function issues(s: RunSpecInput): Record<string, string> {
  const parsed = RunSpec.safeParse(s);
  return parsed.success ? {} : Object.fromEntries(fieldIssues(parsed.error).map((i) => [i.path, i.message]));
}

describe("eval rules", () => {
  it("accepts an eval-only environment beside a trained one, and an eval-only run of frozen actors", () => {
    expect(issues(spec(() => {}))).toEqual({});
    const parsed = RunSpec.parse(spec(() => {}));
    expect(parsed.environments.map((e) => e.evalOnly)).toEqual([false, true]);
    expect(parsed.datasets[1]!.source).toEqual({ kind: "huggingface", id: "openai/gsm8k", config: "main", split: "test" });
    const evalRun = spec((s) => {
      s.trainer!.steps = 0;
      s.trainer!.evalEvery = 0;
      s.environments[0]!.evalOnly = true;
      s.environments.pop();
      s.actors[0]!.trainable = false;
    });
    expect(issues(evalRun)).toEqual({});
  });

  const cases: [string, (s: RunSpecInput) => void, string, RegExp][] = [
    ["every environment eval-only with steps > 0", (s) => (s.environments[0]!.evalOnly = true), "environments", /nothing would train: set trainer.steps to 0/],
    ["an eval-only environment with evalEvery 0", (s) => (s.trainer!.evalEvery = 0), "environments.1.evalOnly", /trainer.evalEvery is 0/],
    ["an eval-only environment on a trained dataset", (s) => (s.environments[1]!.dataset = "letters"), "environments.1.dataset", /trained on by environment "echo"/],
    ["steps 0 with a trained environment holding out no rows", (s) => (s.trainer!.steps = 0), "environments.0.evalOnly", /holds out no rows/],
    ["steps 0 of frozen actors is fine, steps > 0 is not", (s) => (s.actors[0]!.trainable = false), "actors", /at least one actor must be trainable/],
  ];
  it.each(cases)("refuses %s, on the field at fault", (_what, change, path, message) => {
    const found = issues(spec(change));
    expect(Object.keys(found)).toEqual([path]);
    expect(found[path]).toMatch(message);
  });

  it("an eval-only run evaluates a trained environment's held-out rows", () => {
    const s = spec((x) => {
      x.trainer!.steps = 0;
      x.datasets[0]!.evalFraction = 0.25;
    });
    expect(issues(s)).toEqual({});
  });
});
