import { DEMO_SPEC_INPUT } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { fieldDomCandidates, fieldDomId, validateDraft } from "../src/features/experiments/lib/specIssues";

const clone = () => structuredClone(DEMO_SPEC_INPUT) as Record<string, any>;

describe("validateDraft: every error tied to its field", () => {
  it("accepts the demo spec", () => {
    const { spec, issues } = validateDraft(clone());
    expect(issues).toEqual([]);
    expect(spec?.name).toBe(DEMO_SPEC_INPUT.name);
  });

  it("names the field and its composer section for schema errors", () => {
    const draft = clone();
    draft.actors[0].training.learningRate = -1;
    draft.trainer.steps = -1; // 0 is an eval-only run
    const { spec, issues } = validateDraft(draft);
    expect(spec).toBeNull();
    expect(issues.map((i) => [i.path, i.section])).toEqual([
      ["actors.0.training.learningRate", "actors"],
      ["trainer.steps", "trainer"],
    ]);
  });

  it("ties cross-reference errors to the reference (unknown dataset, trainable API actor)", () => {
    const draft = clone();
    draft.environments[0].dataset = "nope";
    draft.actors.push({ name: "judge", model: { source: "huggingface", id: "x/y" }, backend: "openai", api: { baseUrl: "http://h/v1", model: "m" } });
    const paths = validateDraft(draft).issues.map((i) => `${i.path}: ${i.message}`);
    expect(paths).toContain('environments.0.dataset: unknown dataset "nope"');
    expect(paths).toContain("actors.1.trainable: an actor behind an API cannot be trained: set trainable to false");
  });

  it("checks round specs with the dsl, with line and column", () => {
    const draft = clone();
    draft.actors.push({ name: "coach", model: { source: "tiny" } });
    draft.environments[0] = { ...draft.environments[0], kind: "collaborative", actors: ["student", "coach"], roundSpec: "student ->\n  Coach" };
    const { spec, issues } = validateDraft(draft);
    expect(spec).toBeNull();
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: "environments.0.roundSpec", section: "environments", line: 2, column: 3 });
    expect(issues[0]!.message).toMatch(/Coach/);
  });

  it("general fields map to the general section; a root error too", () => {
    const draft = clone();
    draft.name = "";
    expect(validateDraft(draft).issues[0]).toMatchObject({ path: "name", section: "general" });
    expect(validateDraft("not a spec").issues[0]).toMatchObject({ path: "(root)", section: "general" });
  });
});

describe("field ids for jumping to an error", () => {
  it("tries the field, then its parents", () => {
    expect(fieldDomId("actors.0.api")).toBe("field-actors.0.api");
    expect(fieldDomCandidates("actors.0.api")).toEqual(["field-actors.0.api", "field-actors.0", "field-actors"]);
    expect(fieldDomId("(root)")).toBe("field-_root_");
  });
});
