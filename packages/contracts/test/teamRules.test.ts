import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues, type RunSpecInput } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/**
 * The team learners' rules (teamRules.ts) through RunSpec, on the cases the runtime's mirror
 * (gpu-runtime/tests/test_team_rules.py) runs too.
 */
interface Case {
  name: string;
  base: "demo" | "relay";
  algorithm?: Record<string, unknown>;
  secondTrainable?: boolean;
  issues: string[];
}

const FIXTURE = JSON.parse(readFileSync(resolve(__dirname, "../../../gpu-runtime/tests/fixtures/team_rules.cases.json"), "utf8"));
const CASES: Case[] = FIXTURE.cases;

function applyCase(c: Case): RunSpecInput {
  const s = structuredClone(c.base === "demo" ? DEMO_SPEC_INPUT : FIXTURE.relay) as { algorithm: object; actors: { trainable?: boolean }[] };
  s.algorithm = { ...s.algorithm, ...c.algorithm };
  if (c.secondTrainable !== undefined) s.actors[1]!.trainable = c.secondTrainable;
  return s as unknown as RunSpecInput;
}

describe("team learner rules (vdn, qmix, happo) and algorithm.advantage", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = RunSpec.safeParse(applyCase(c));
      const paths = parsed.success ? [] : fieldIssues(parsed.error).map((i) => i.path);
      expect(paths.sort()).toEqual([...c.issues].sort());
    });
  }

  it("fills the team settings' defaults", () => {
    const parsed = RunSpec.parse(applyCase(CASES[0]!));
    expect(parsed.algorithm).toMatchObject({ name: "vdn", advantage: "group", rae: { decay: 0.95 }, qmix: { mixingEmbedDim: 32 }, happo: { factorClip: 10 } });
  });

  it("says why a team learner needs two trainable actors", () => {
    const parsed = RunSpec.safeParse(applyCase(CASES.find((c) => c.name === "vdn with one trainable actor")!));
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(fieldIssues(parsed.error)[0]!.message).toMatch(/fewer than 2 trainable actors/);
  });
});
