import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";
import { rolloutIssues } from "../src/rolloutRules";

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

  it("accepts GPU workers with a CUDA trainer while the runner is unknown, on policy or feeding async, and refuses them on a CPU trainer", () => {
    expect(issues((s) => ({ ...s, trainer: { ...s.trainer, device: "cuda" }, rollout: { workers: { count: 1, gpus: [1] } } }))).toEqual([]);
    expect(issues((s) => ({ ...s, algorithm: { ...s.algorithm, async: { maxStaleness: 1 } }, trainer: { ...s.trainer, device: "cuda" }, rollout: { workers: { count: 1, gpus: [1] } } }))).toEqual([]);
    const found = issues((s) => ({ ...s, algorithm: { ...s.algorithm, async: { maxStaleness: 1 } }, trainer: { ...s.trainer, device: "cpu" }, rollout: { workers: { count: 1, gpus: [1] } } }));
    expect(found.map((i) => i.path).sort()).toEqual(["trainer.device"]);
    expect(found.find((i) => i.path === "trainer.device")!.message).toMatch(/CUDA trainer \(NCCL\)/);
  });

  it("refuses GPU workers by field on a runner without CUDA", () => {
    const spec = { ...DEMO_SPEC_INPUT, trainer: { ...DEMO_SPEC_INPUT.trainer, device: "auto" }, rollout: { workers: { count: 1, gpus: [1] } } };
    const parsed = RunSpec.parse(spec);
    const onCpu = rolloutIssues(parsed, { cudaAvailable: false });
    expect(onCpu.map((i) => i.path.join("."))).toEqual(["rollout.workers.gpus"]);
    expect(onCpu[0]!.message).toMatch(/need a CUDA host/);
    expect(rolloutIssues(parsed, { cudaAvailable: true })).toEqual([]);
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
