import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { DEMO_SPEC_INPUT, RunSpec, RunEvent, describeIssues } from "../src";

const repo = resolve(__dirname, "../../..");

describe("RunSpec v1", () => {
  it("fills defaults for the demo spec", () => {
    const spec = RunSpec.parse(DEMO_SPEC_INPUT);
    expect(spec.specVersion).toBe(1);
    expect(spec.actors[0]!.training.optimizer).toBe("adamw");
    expect(spec.algorithm.groupSize).toBe(8);
  });

  it("names the field of every problem", () => {
    const bad = structuredClone(DEMO_SPEC_INPUT) as any;
    bad.trainer.steps = 0;
    bad.environments[0].dataset = "nope";
    bad.actors[0].name = "1bad";
    const result = RunSpec.safeParse(bad);
    expect(result.success).toBe(false);
    const text = describeIssues(result.error!);
    expect(text).toContain("trainer.steps");
    expect(text).toContain("actors.0.name");
  });

  it("reports cross references once the shape is valid", () => {
    const bad = structuredClone(DEMO_SPEC_INPUT) as any;
    bad.environments[0].dataset = "nope";
    const result = RunSpec.safeParse(bad);
    expect(describeIssues(result.error!)).toBe('environments.0.dataset: unknown dataset "nope"');
  });

  it("refuses a trainable actor behind an API", () => {
    const bad = structuredClone(DEMO_SPEC_INPUT) as any;
    bad.actors[0].backend = "openai";
    bad.actors[0].api = { baseUrl: "http://localhost:1/v1", model: "m" };
    const result = RunSpec.safeParse(bad);
    expect(describeIssues(result.error!)).toContain("actors.0.trainable");
  });

  it("rejects unknown fields instead of ignoring them", () => {
    const bad = { ...structuredClone(DEMO_SPEC_INPUT), trainr: {} } as any;
    const result = RunSpec.safeParse(bad);
    expect(result.success).toBe(false);
    expect(describeIssues(result.error!)).toContain("trainr");
  });
});

describe("events", () => {
  it("parses a metric event and rejects one without seq", () => {
    expect(RunEvent.parse({ type: "metric", seq: 3, ts: 1, step: 1, values: { loss: 0.5 } }).type).toBe("metric");
    expect(RunEvent.safeParse({ type: "metric", ts: 1, step: 1, values: {} }).success).toBe(false);
  });
});

describe("JSON Schema export", () => {
  it("committed schema files equal what the zod schemas generate (drift)", () => {
    // Exits 1 and names the stale file when someone changed a zod schema without re-exporting.
    execFileSync("npx", ["tsx", "packages/contracts/scripts/export-json-schema.ts", "--check"], {
      cwd: repo,
      stdio: "pipe",
    });
  });
});
