import { describe, expect, it } from "vitest";
import { RunSpec, DEMO_SPEC_INPUT } from "@troupe/contracts";
import { switchLearner } from "../src/features/experiments/lib/learnerSwitch";

describe("switching the learner in the composer", () => {
  it("drops what only the old learner read, so the draft is not refused at a hidden field", () => {
    const ppo = { name: "ppo", groupSize: 8, valueNorm: false, criticLearningRate: 1e-4, entropyCoef: 0.02, lambda: 1 };
    const grpo = switchLearner(ppo, "grpo");
    expect(grpo).toEqual({ name: "grpo", groupSize: 8, entropyCoef: 0.02, lambda: 1 });
    // ...and the spec it makes is valid (before: refused at algorithm.valueNorm, an input the grpo form hides).
    expect(RunSpec.safeParse({ ...DEMO_SPEC_INPUT, algorithm: grpo }).success).toBe(true);
    expect(RunSpec.safeParse({ ...DEMO_SPEC_INPUT, algorithm: { ...ppo, name: "grpo" } }).success).toBe(false);
  });

  it("keeps what the new learner reads, and drops sampling settings for sft and dpo", () => {
    const grpo = { name: "grpo", entropyCoef: 0.01, async: { maxStaleness: 1 }, importanceCorrection: { kind: "tis", cap: 2 }, dynamicSampling: { enabled: true } };
    expect(switchLearner(grpo, "dapo")).toEqual({ ...grpo, name: "dapo" });
    expect(switchLearner(grpo, "sft")).toEqual({ name: "sft" });
    expect(switchLearner(grpo, "mappo")).toEqual({ name: "mappo", entropyCoef: 0.01, importanceCorrection: { kind: "tis", cap: 2 } });
    expect(switchLearner({ name: "dpo", beta: 0.1, dpoLoss: "robust", labelSmoothing: 0.1 }, "grpo")).toEqual({ name: "grpo", beta: 0.1, dpoLoss: "robust" });
  });

  it("never leaves an algorithm field refused: every learner's full settings, switched to every other learner", () => {
    const learners = ["grpo", "dr_grpo", "dapo", "gspo", "ppo", "ippo", "mappo", "sft", "dpo"];
    const sampling = { entropyCoef: 0.01, importanceCorrection: { kind: "tis", cap: 2 } };
    const full: Record<string, Record<string, unknown>> = {
      grpo: { ...sampling, async: { maxStaleness: 1 }, dynamicSampling: { enabled: true } },
      ppo: { ...sampling, valueNorm: false, criticLearningRate: 1e-4 },
      sft: {},
      dpo: { beta: 0.2, dpoLoss: "robust", labelSmoothing: 0.1 },
    };
    const settingsOf = (name: string) => full[name] ?? full[["ppo", "ippo", "mappo"].includes(name) ? "ppo" : "grpo"]!;
    const algorithmIssues = (algorithm: Record<string, unknown>) => {
      const parsed = RunSpec.safeParse({ ...DEMO_SPEC_INPUT, algorithm });
      return parsed.success ? [] : parsed.error.issues.map((i) => i.path.join(".")).filter((p) => p.startsWith("algorithm"));
    };
    for (const from of learners) {
      const before = { name: from, ...settingsOf(from) };
      expect(algorithmIssues(before), `${from}'s own settings`).toEqual([]);
      for (const to of learners) expect(algorithmIssues(switchLearner(before, to)), `${from} -> ${to}`).toEqual([]);
    }
  });
});
