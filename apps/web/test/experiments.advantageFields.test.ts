import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ADVANTAGE_SUMMARIES, DEMO_SPEC_INPUT, RunSpec, type AdvantageEstimator } from "@troupe/contracts";
import { AdvantageFields } from "../src/features/experiments/components/composer/SettingsSections";
import { ComposerContext, type ComposerState } from "../src/features/experiments/components/composer/fields";
import { switchLearner } from "../src/features/experiments/lib/learnerSwitch";

function render(advantage: AdvantageEstimator, draft: ComposerState["draft"] = {}): string {
  const state: ComposerState = { draft, set: () => undefined, issues: new Map() };
  return renderToString(createElement(ComposerContext.Provider, { value: state }, createElement(AdvantageFields, { advantage })));
}

const decode = (html: string) => html.replace(/&#x27;/g, "'").replace(/&amp;/g, "&");

describe("the composer's advantage picker", () => {
  it("offers hierarchical with its one line, and its settings only when chosen", () => {
    const html = decode(render("hierarchical", { algorithm: { advantage: "hierarchical" } }));
    expect(html).toContain('<option value="hierarchical"');
    expect(html).toContain(ADVANTAGE_SUMMARIES.hierarchical);
    for (const path of ["proposer", "solver", "solverSamples", "proposerReward"]) expect(html).toContain(`algorithm.hierarchical.${path}`);
    expect(html).toMatch(/placeholder="proposer"/);
    expect(html).toMatch(/placeholder="4"/);
    expect(html).toContain('<option value="frontier"');
    const group = decode(render("group"));
    expect(group).toContain(ADVANTAGE_SUMMARIES.group);
    expect(group).not.toContain("algorithm.hierarchical");
    expect(decode(render("rae"))).toContain("algorithm.rae.decay");
  });

  it("is dropped with the learner that reads it: switching to ppo leaves no refused advantage behind", () => {
    const ppo = switchLearner({ name: "grpo", advantage: "hierarchical", hierarchical: { solverSamples: 2 } }, "ppo");
    expect(ppo.advantage).toBeUndefined();
    expect(RunSpec.safeParse({ ...DEMO_SPEC_INPUT, algorithm: ppo }).success).toBe(true);
  });
});
