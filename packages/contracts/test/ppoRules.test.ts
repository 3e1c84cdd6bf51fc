import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues, type RunSpecInput } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/**
 * The PPO family's rules (ppoRules.ts) through RunSpec, on the cases the runtime's mirror
 * (gpu-runtime/tests/test_ppo_rules.py) runs too.
 */
interface Case {
  name: string;
  algorithm?: Record<string, unknown>;
  actor?: { training?: Record<string, unknown> };
  issues: string[];
}

const CASES: Case[] = JSON.parse(readFileSync(resolve(__dirname, "../../../gpu-runtime/tests/fixtures/ppo_rules.cases.json"), "utf8")).cases;

function applyCase(c: Case): RunSpecInput {
  const s = structuredClone(DEMO_SPEC_INPUT) as unknown as { algorithm: object; actors: { training?: object }[] };
  s.algorithm = { ...s.algorithm, ...c.algorithm };
  s.actors[0]!.training = { ...s.actors[0]!.training, ...c.actor?.training };
  return s as unknown as RunSpecInput;
}

describe("PPO family rules (ppo, ippo, mappo)", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = RunSpec.safeParse(applyCase(c));
      const paths = parsed.success ? [] : fieldIssues(parsed.error).map((i) => i.path);
      expect(paths.sort()).toEqual([...c.issues].sort());
    });
  }

  it("fills the PPO defaults: gamma 1, lambda 0.95, value clipping 0.2", () => {
    const parsed = RunSpec.parse(applyCase(CASES[1]!));
    expect(parsed.algorithm).toMatchObject({ name: "ippo", gamma: 1, lambda: 0.95, valueClip: 0.2 });
  });

  it("says why mappo cannot value a single-turn environment", () => {
    const parsed = RunSpec.safeParse(applyCase(CASES.find((c) => c.name === "mappo in a single-turn environment")!));
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(fieldIssues(parsed.error)[0]!.message).toMatch(/^mappo's centralised critic values every actor's turns/);
  });
});
