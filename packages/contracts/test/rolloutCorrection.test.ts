import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/** algorithm.importanceCorrection (truncated importance sampling), through RunSpec. */
function parse(algorithm: Record<string, unknown>) {
  return RunSpec.safeParse({ ...DEMO_SPEC_INPUT, algorithm: { ...DEMO_SPEC_INPUT.algorithm, ...algorithm } });
}

function issues(algorithm: Record<string, unknown>) {
  const parsed = parse(algorithm);
  return parsed.success ? [] : fieldIssues(parsed.error);
}

describe("algorithm.importanceCorrection", () => {
  it("is absent by default, and tis fills its cap", () => {
    const plain = parse({});
    expect(plain.success && plain.data.algorithm.importanceCorrection).toBeUndefined();
    const tis = parse({ importanceCorrection: { kind: "tis" } });
    expect(tis.success && tis.data.algorithm.importanceCorrection).toEqual({ kind: "tis", cap: 2 });
    expect(issues({ importanceCorrection: { kind: "tis", cap: 1 } })).toEqual([]);
  });

  it("refuses a cap below 1, naming the field", () => {
    const found = issues({ importanceCorrection: { kind: "tis", cap: 0.5 } });
    expect(found.map((i) => i.path)).toEqual(["algorithm.importanceCorrection.cap"]);
    expect(found[0]!.message).toMatch(/at least 1/);
  });

  it("refuses a cap that is not a finite number, and an unknown kind", () => {
    expect(issues({ importanceCorrection: { kind: "tis", cap: "3" } }).map((i) => i.path)).toEqual(["algorithm.importanceCorrection.cap"]);
    expect(issues({ importanceCorrection: { kind: "tis", cap: Number.POSITIVE_INFINITY } }).map((i) => i.path)).toEqual([
      "algorithm.importanceCorrection.cap",
    ]);
    expect(issues({ importanceCorrection: { kind: "mis", cap: 2 } }).map((i) => i.path)).toEqual(["algorithm.importanceCorrection.kind"]);
  });
});

/** algorithm.async (asyncRules.ts, through RunSpec); gpu-runtime/tests/test_async_rules.py runs the same cases. */
describe("algorithm.async", () => {
  const K1 = { async: { maxStaleness: 1 } };
  function asyncIssues(patch: (spec: typeof DEMO_SPEC_INPUT) => Record<string, unknown>, algorithm: Record<string, unknown> = K1) {
    const spec = structuredClone(DEMO_SPEC_INPUT);
    const doc = { ...patch(spec), algorithm: { ...spec.algorithm, ...algorithm } };
    const parsed = RunSpec.safeParse(doc);
    return parsed.success ? [] : fieldIssues(parsed.error).filter((i) => i.message.includes("algorithm.async") || i.path.startsWith("algorithm.async"));
  }
  const actor0 = (spec: typeof DEMO_SPEC_INPUT, extra: Record<string, unknown>) => ({ ...spec, actors: [{ ...spec.actors[0], ...extra }] });

  it("accepts the demo with a staleness bound, fills K = 1 by default, and refuses a negative one", () => {
    expect(asyncIssues((s) => s)).toEqual([]);
    const filled = RunSpec.safeParse({ ...DEMO_SPEC_INPUT, algorithm: { ...DEMO_SPEC_INPUT.algorithm, async: {} } });
    expect(filled.success && filled.data.algorithm.async).toEqual({ maxStaleness: 1 });
    const negative = RunSpec.safeParse({ ...DEMO_SPEC_INPUT, algorithm: { ...DEMO_SPEC_INPUT.algorithm, async: { maxStaleness: -1 } } });
    expect(negative.success ? [] : fieldIssues(negative.error).map((i) => i.path)).toEqual(["algorithm.async.maxStaleness"]);
  });

  it("accepts several ranks: each rank runs its own producer", () => {
    expect(asyncIssues((s) => actor0(s, { placement: { processes: 2 } }))).toEqual([]);
    expect(asyncIssues((s) => actor0(s, { placement: { processes: 1 } }))).toEqual([]);
  });

  it("accepts a sharded training backend (its copy is loaded with the gathered weights)", () => {
    expect(asyncIssues((s) => actor0(s, { training: { backend: "fsdp2" } }))).toEqual([]);
    expect(asyncIssues((s) => actor0(s, { training: { backend: "deepspeed" }, placement: { processes: 2 } }))).toEqual([]);
  });

  it("accepts a vLLM engine that stays awake (sleepLevel 0), and refuses one that would sleep, on vllm.sleepLevel", () => {
    const model = { source: "huggingface", id: "Qwen/Qwen2.5-0.5B" };
    expect(asyncIssues((s) => actor0(s, { backend: "vllm", model })).map((i) => i.path)).toEqual(["actors.0.vllm.sleepLevel"]);
    expect(asyncIssues((s) => actor0(s, { backend: "vllm", model, vllm: { sleepLevel: 2 } })).map((i) => i.path)).toEqual(["actors.0.vllm.sleepLevel"]);
    expect(asyncIssues((s) => actor0(s, { backend: "vllm", model, vllm: { sleepLevel: 0 } }))).toEqual([]);
  });

  it("accepts multi-turn environments: whole episodes are produced ahead", () => {
    const found = asyncIssues((s) => ({ ...s, environments: [{ ...s.environments[0], kind: "collaborative", roundSpec: "student" }] }));
    expect(found).toEqual([]);
  });

  it("refuses learners outside the GRPO family, on algorithm.async", () => {
    expect(asyncIssues((s) => s, { ...K1, name: "ppo" }).map((i) => i.path)).toEqual(["algorithm.async"]);
  });
});
