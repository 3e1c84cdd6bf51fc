import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { activationCases } from "../scripts/activationCases";
import { DEFAULT_ASSUMPTIONS, DEMO_SPEC_INPUT, estimateRunMemory, RunSpec } from "../src";

function withMicro(value: unknown) {
  const input = structuredClone(DEMO_SPEC_INPUT) as Record<string, any>;
  input.trainer.microBatchSize = value;
  return input;
}

describe('trainer.microBatchSize: a number or "auto"', () => {
  it('accepts "auto" and whole numbers; absent is "auto"', () => {
    expect(RunSpec.parse(withMicro("auto")).trainer.microBatchSize).toBe("auto");
    expect(RunSpec.parse(withMicro(4)).trainer.microBatchSize).toBe(4);
    expect(RunSpec.parse(DEMO_SPEC_INPUT).trainer.microBatchSize).toBe("auto");
  });

  it.each([["big"], [0], [1.5], [-1], [65537], [true], [null]])("refuses %j at trainer.microBatchSize", (value) => {
    const result = RunSpec.safeParse(withMicro(value));
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path.join("."))).toEqual(["trainer.microBatchSize"]);
  });

  it('"auto" is estimated as the whole batch (its upper bound: the device sizes it at the update)', () => {
    const a = { ...DEFAULT_ASSUMPTIONS, gpuMemoryGiB: 80, promptTokens: 100 };
    const whole = estimateRunMemory(RunSpec.parse(withMicro(65536)), a, () => 1, "gpu");
    const auto = estimateRunMemory(RunSpec.parse(withMicro("auto")), a, () => 1, "gpu");
    const four = estimateRunMemory(RunSpec.parse(withMicro(4)), a, () => 1, "gpu");
    expect(auto.actors[0]!.memory!.activations).toBe(whole.actors[0]!.memory!.activations);
    expect(four.actors[0]!.memory!.activations).toBeLessThan(whole.actors[0]!.memory!.activations);
  });
});

describe("the runtime's port of the activation model (gpu-runtime algorithms/micro_batch.py)", () => {
  it("gpu-runtime/tests/fixtures/activation_bytes.json is what the estimate gives now (else: npm run contracts:export)", () => {
    const file = resolve(__dirname, "../../../gpu-runtime/tests/fixtures/activation_bytes.json");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(activationCases());
  });

  it("tiny-char-2l in fp32 keeps 19,968 bytes per token, worked out by hand", () => {
    // h = kv = 64, i = 256: (7h + 2kv + 4i) x 4 = 6,400 a layer; 2 layers + 3h x 4 (768) + one layer of working space.
    const tiny = activationCases().find((c) => c.model === "tiny-char-2l" && c.precision === "fp32" && !c.gradientCheckpointing)!;
    expect(tiny.bytesPerToken).toBe(2 * 6400 + 768 + 6400);
  });
});
