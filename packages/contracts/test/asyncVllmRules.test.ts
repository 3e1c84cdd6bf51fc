import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues, type RunSpecInput } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/**
 * Asynchronous rollouts with a vLLM actor (asyncRules.ts vllmAsyncIssues) through RunSpec, on the cases the
 * runtime's mirror (gpu-runtime/tests/test_async_rules.py) runs too.
 */
interface Case {
  name: string;
  algorithm?: Record<string, unknown>;
  actor?: Record<string, unknown>;
  issues: string[];
}

const CASES: Case[] = JSON.parse(readFileSync(resolve(__dirname, "../../../gpu-runtime/tests/fixtures/async_vllm_rules.cases.json"), "utf8")).cases;

function applyCase(c: Case): RunSpecInput {
  const s = structuredClone(DEMO_SPEC_INPUT) as unknown as { algorithm: object; actors: object[] };
  s.algorithm = { ...s.algorithm, ...c.algorithm };
  s.actors[0] = { ...s.actors[0], ...c.actor };
  return s as unknown as RunSpecInput;
}

describe("asynchronous rollouts with a vLLM actor", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = RunSpec.safeParse(applyCase(c));
      const found = parsed.success ? [] : fieldIssues(parsed.error).filter((i) => i.message.includes("algorithm.async") || i.path.startsWith("algorithm.async"));
      expect(found.map((i) => i.path).sort()).toEqual([...c.issues].sort());
    });
  }

  it("says the engine must stay awake and how", () => {
    const parsed = RunSpec.safeParse(applyCase(CASES[0]!));
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(fieldIssues(parsed.error).find((i) => i.path === "actors.0.vllm.sleepLevel")!.message).toMatch(/cannot sleep to make room \(level 1\): set vllm.sleepLevel to 0/);
  });
});
