import { describe, expect, it } from "vitest";
import { DEMO_SPEC_INPUT, EnvironmentSpec, fieldIssues, RunSpec } from "../src/index";

/** Forms show these beside the field: words, never zod's "Too small: expected array to have >=1 items". */
const messages = (result: { success: boolean; error?: unknown }) => fieldIssues((result as { error: Parameters<typeof fieldIssues>[0] }).error);

describe("validation messages in words", () => {
  it("says what is missing or empty", () => {
    const issues = messages(EnvironmentSpec.safeParse({ name: "x", kind: "collaborative", actors: [], rewards: [] }));
    expect(issues).toEqual([
      { path: "dataset", message: "is required" },
      { path: "actors", message: "add at least one" },
    ]);
    // Rewards may be empty on an environment (code and python environments score themselves, SFT/DPO need none):
    // RunSpec says where one is missing.
  });

  it("says bounds, choices and unknown fields plainly", () => {
    const issues = messages(
      RunSpec.safeParse({ ...DEMO_SPEC_INPUT, name: "", bogus: 1, trainer: { ...DEMO_SPEC_INPUT.trainer, steps: -1, device: "tpu" } }),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: "name", message: "must not be empty" },
        { path: "trainer.steps", message: "must be at least 0" },
        { path: "trainer.device", message: 'must be one of "auto", "cpu", "cuda"' },
        { path: "(root)", message: "is not a known field: bogus" },
      ]),
    );
    for (const i of issues) expect(i.message).not.toMatch(/Too small|Too big|Invalid input|expected \w+ to have/);
  });

  it("keeps a schema's own message", () => {
    const spec = { ...DEMO_SPEC_INPUT, environments: [{ ...DEMO_SPEC_INPUT.environments[0], actors: ["nobody"] }] };
    expect(messages(RunSpec.safeParse(spec))).toContainEqual({ path: "environments.0.actors.0", message: 'unknown actor "nobody"' });
  });
});
