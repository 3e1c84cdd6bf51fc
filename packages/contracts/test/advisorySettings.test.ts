import { describe, expect, it } from "vitest";
import { ADVISORY_SETTING_SECTIONS, AdvisoriesSpec, TrainerSpec } from "../src";

const sectionKeys = Object.keys(AdvisoriesSpec.shape).filter((k) => k !== "enabled" && k !== "window");

describe("trainer.advisories", () => {
  it("has the runtime's documented defaults", () => {
    const d = AdvisoriesSpec.parse({});
    expect(d).toMatchObject({ enabled: true, window: 5, collapse: { dominantCharShare: 0.6, promptShare: 0.6, crossPromptShare: 0.5, entropyRatio: 0.5 } });
    expect(d.klBlowup.max).toBe(1);
    expect(d.actorStalled.gradNorm).toBe(1e-8);
    expect(d.staleness.max).toBeUndefined();
    // A section given in part keeps the defaults of the rest.
    expect(AdvisoriesSpec.parse({ collapse: { promptShare: 0.8 } }).collapse).toEqual({ dominantCharShare: 0.6, promptShare: 0.8, crossPromptShare: 0.5, entropyRatio: 0.5 });
  });

  it("is absent unless set (a spec without it is unchanged)", () => {
    expect(TrainerSpec.parse({}).advisories).toBeUndefined();
  });

  it("lists every section and field once for the designer, each with what it catches", () => {
    expect(ADVISORY_SETTING_SECTIONS.map((s) => s.key).sort()).toEqual([...sectionKeys].sort());
    for (const section of ADVISORY_SETTING_SECTIONS) {
      const shape = (AdvisoriesSpec.shape[section.key] as unknown as { unwrap(): { shape: Record<string, unknown> } }).unwrap().shape;
      expect(section.fields.map((f) => f.key).sort()).toEqual(Object.keys(shape).sort());
      expect(section.catches.length).toBeGreaterThan(10);
    }
  });

  it.each([
    [{ collapse: { promptShare: 1.5 } }, ["trainer", "advisories", "collapse", "promptShare"]],
    [{ window: 1 }, ["trainer", "advisories", "window"]],
    [{ klBlowup: { max: -1 } }, ["trainer", "advisories", "klBlowup", "max"]],
    [{ rewardHacking: { evals: 2.5 } }, ["trainer", "advisories", "rewardHacking", "evals"]],
    [{ collapse: { minDistinct: 0.2 } }, ["trainer", "advisories", "collapse"]],
  ])("refuses %j at its field", (advisories, path) => {
    const r = TrainerSpec.safeParse({ advisories });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(path.slice(1));
  });
});
