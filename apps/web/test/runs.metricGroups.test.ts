import { describe, expect, it } from "vitest";
import { bandFor, bandTarget, groupMetrics } from "../src/features/runs/lib/metricGroups";

/** What the runtime reports for one actor with a reward component `correct` (gpu-runtime train.py). */
const RUNTIME_NAMES = [
  "reward/mean",
  "reward/std",
  "reward/correct",
  "reward/correct/std",
  "advantage/mean",
  "advantage/std",
  "advantage/min",
  "advantage/max",
  "loss",
  "kl",
  "clip_frac",
  "entropy",
  "logprob_gap",
  "truncation_rate",
  "grad_norm",
  "lr",
  "completion_len",
  "completion_len/max",
  "tokens_per_s",
  "step_time_s",
  "kept_groups",
  "eval/reward/mean",
  "my_custom_metric",
];

describe("metric groups", () => {
  it("draws each …/std as the band of its mean (or of the metric itself), never as a chart of its own", () => {
    const names = new Set(RUNTIME_NAMES);
    expect(bandTarget("reward/std", names)).toBe("reward/mean");
    expect(bandTarget("reward/correct/std", names)).toBe("reward/correct");
    expect(bandTarget("advantage/std", names)).toBe("advantage/mean");
    expect(bandFor("reward/mean", names)).toBe("reward/std");
    expect(bandFor("reward/correct", names)).toBe("reward/correct/std");
    expect(bandFor("advantage/mean", names)).toBe("advantage/std");
    expect(bandFor("loss", names)).toBeUndefined();
    // A std whose chart the run does not report stays a chart of its own.
    expect(bandTarget("loss/std", new Set(["loss/std"]))).toBeNull();
    expect(groupMetrics(["loss/std"])).toEqual([{ title: "Policy", names: ["loss/std"] }]);

    const charted = groupMetrics(RUNTIME_NAMES).flatMap((g) => g.names);
    expect(charted.filter((n) => n.endsWith("/std"))).toEqual([]);
    expect(charted).toHaveLength(RUNTIME_NAMES.length - 3);
  });

  it("puts the runtime's metrics in their sections, sub-metrics with their parent, unknown ones in Other", () => {
    const groups = Object.fromEntries(groupMetrics(RUNTIME_NAMES).map((g) => [g.title, g.names]));
    expect(Object.keys(groups)).toEqual(["Reward", "Policy", "Optimiser", "Throughput", "Group filtering", "Eval", "Other"]);
    expect(groups.Reward!.slice(0, 2)).toEqual(["reward/mean", "advantage/mean"]);
    expect(groups.Policy).toEqual(["loss", "kl", "clip_frac", "entropy", "logprob_gap", "truncation_rate"]);
    expect(groups.Throughput).toEqual(["completion_len", "tokens_per_s", "step_time_s", "completion_len/max"]);
    expect(groups.Eval).toEqual(["eval/reward/mean"]);
    expect(groups.Other).toEqual(["my_custom_metric"]);
  });

  it("puts the runtime's phase seconds (time/<phase>_s) under Throughput, after the step time", () => {
    const names = ["step_time_s", "time/forward_s", "time/backward_s", "time/optimizer_s", "time/offload_s", "time_to_answer"];
    const groups = Object.fromEntries(groupMetrics(names).map((g) => [g.title, g.names]));
    expect(groups.Throughput).toEqual(["step_time_s", "time/forward_s", "time/backward_s", "time/optimizer_s", "time/offload_s"]);
    expect(groups.Other).toEqual(["time_to_answer"]); // a prefix, not a sub-metric
  });

  it("gives the other learners' metrics their own sections (critic, preferences, off-policy)", () => {
    const names = ["loss", "value/loss", "value/clip_frac", "value/explained_variance", "returns/mean", "dpo/accuracy", "dpo/margin", "sft/token_accuracy", "staleness/max", "staleness/mean", "tis/weight_mean"];
    const groups = Object.fromEntries(groupMetrics(names).map((g) => [g.title, g.names]));
    expect(groups.Critic).toEqual(["value/loss", "value/explained_variance", "returns/mean", "value/clip_frac"]);
    expect(groups["Preferences and supervision"]).toEqual(["dpo/margin", "dpo/accuracy", "sft/token_accuracy"]);
    expect(groups["Off-policy"]).toEqual(["staleness/max", "staleness/mean", "tis/weight_mean"]);
    expect(groups.Policy).toEqual(["loss"]);
  });

  it("gives the tools environment's metrics a section of their own, the success rate first", () => {
    // What gpu-runtime's tools_env.py reports per step, beside the reward.
    const names = ["reward/mean", "tools/answer_rate", "tools/errors", "tools/calls", "tools/success_rate", "loss"];
    const groups = groupMetrics(names);
    expect(groups.map((g) => g.title)).toEqual(["Reward", "Policy", "Tools"]);
    expect(groups[2]!.names).toEqual(["tools/success_rate", "tools/calls", "tools/errors", "tools/answer_rate"]);
  });

  it("gives games' outcome rates and the per-turn metrics sections of their own (issue 31)", () => {
    const names = ["reward/mean", "turns/1/tokens", "game/win", "turns/0/share", "game/loss"];
    const groups = Object.fromEntries(groupMetrics(names).map((g) => [g.title, g.names]));
    expect(groups.Games?.sort()).toEqual(["game/loss", "game/win"]);
    expect(groups.Turns?.sort()).toEqual(["turns/0/share", "turns/1/tokens"]);
    expect(groups.Other ?? []).toEqual([]);
  });

  it("gives rollout workers' pool seconds a section of their own (issue 28), not Throughput's", () => {
    // What gpu-runtime's rollout/workers.py reports per step on each trained actor.
    const names = ["step_time_s", "time/weight_sync_s", "time/trainer_idle_s", "time/rollout_idle_s", "time/trainer_busy_s", "time/rollout_busy_s", "time/forward_s"];
    const groups = Object.fromEntries(groupMetrics(names).map((g) => [g.title, g.names]));
    expect(groups["Rollout workers"]).toEqual(["time/rollout_busy_s", "time/trainer_busy_s", "time/weight_sync_s", "time/rollout_idle_s", "time/trainer_idle_s"]);
    expect(groups.Throughput).toEqual(["step_time_s", "time/forward_s"]);
  });
});
