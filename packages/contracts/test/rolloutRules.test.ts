import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/** rollout.workers through RunSpec: what the pool cannot honour is refused by field before anything is queued
 * (the same paths and messages as the runtime's spec/rollout_rules.py). */
// A spec document as a user writes it, patched freely: the parser under test decides what it is.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Spec = Record<string, any>;

function issues(patch: (spec: Spec) => Spec) {
  const spec = patch(structuredClone({ ...DEMO_SPEC_INPUT, rollout: { workers: { count: 2, processes: true } } }) as Spec);
  const parsed = RunSpec.safeParse(spec);
  return parsed.success ? [] : fieldIssues(parsed.error);
}

describe("rollout.workers", () => {
  it("CPU workers on the demo (GRPO, one rank, torch, hf) are accepted", () => {
    expect(issues((s) => s)).toEqual([]);
  });

  it("refuses GPU workers, naming what is not built", () => {
    const found = issues((s) => ({ ...s, rollout: { workers: { count: 1, gpus: [0] } } }));
    expect(found.map((i) => i.path)).toEqual(["rollout.workers.gpus"]);
    expect(found[0]!.message).toMatch(/NCCL weight broadcast is not built yet/);
  });

  it("accepts workers feeding async rollouts (algorithm.async)", () => {
    expect(issues((s) => ({ ...s, algorithm: { ...s.algorithm, async: { maxStaleness: 1 } } }))).toEqual([]);
  });

  it("refuses dynamic sampling and a CUDA trainer on their own fields", () => {
    const found = issues((s) => ({
      ...s,
      algorithm: { ...s.algorithm, async: { maxStaleness: 1 }, dynamicSampling: { enabled: true } },
      trainer: { ...s.trainer, device: "cuda" },
    }));
    expect(found.map((i) => i.path).sort()).toEqual(["algorithm.dynamicSampling.enabled", "trainer.device"]);
  });

  it("refuses a learner outside the GRPO family at rollout.workers, and a sharded or multi-rank actor at its field", () => {
    expect(issues((s) => ({ ...s, algorithm: { ...s.algorithm, name: "ppo" } })).map((i) => i.path)).toContain("rollout.workers");
    const actors = DEMO_SPEC_INPUT.actors as Spec[];
    const sharded = issues((s) => ({ ...s, actors: [{ ...actors[0], training: { ...actors[0]!.training, backend: "fsdp2" }, placement: { gpus: [], processes: 2 } }, ...actors.slice(1)] }));
    expect(sharded.map((i) => i.path)).toEqual(expect.arrayContaining(["actors.0.training.backend", "actors.0.placement.processes"]));
  });

  it("asks for gpus or processes, not both or neither", () => {
    expect(issues((s) => ({ ...s, rollout: { workers: { count: 2 } } })).map((i) => i.path)).toEqual(["rollout.workers.processes"]);
  });
});
