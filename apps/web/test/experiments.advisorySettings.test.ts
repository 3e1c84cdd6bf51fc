import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ADVISORY_SETTING_SECTIONS } from "@troupe/contracts";
import { AdvisorySettings } from "../src/features/experiments/components/composer/AdvisorySettings";
import { ComposerContext, type ComposerState } from "../src/features/experiments/components/composer/fields";

function render(draft: ComposerState["draft"], issues: ComposerState["issues"] = new Map()): string {
  const state: ComposerState = { draft, set: () => undefined, issues };
  return renderToString(createElement(ComposerContext.Provider, { value: state }, createElement(AdvisorySettings)));
}

describe("the composer's Health advisories section", () => {
  it("is collapsed, and lists every advisory with what it catches and its defaults as placeholders", () => {
    const html = render({});
    expect(html).toMatch(/^<details[^>]*data-testid="advisory-settings"/);
    expect(html).not.toMatch(/<details[^>]* open/);
    expect(html).toContain("<summary>Health advisories</summary>");
    for (const s of ADVISORY_SETTING_SECTIONS) expect(html).toContain(`data-testid="advisory-setting-${s.key}"`);
    expect(html).toContain("KL to the reference stayed high for a whole window.");
    expect(html).toMatch(/placeholder="0.6"/); // collapse.dominantCharShare
    expect(html).toMatch(/placeholder="1e-8"/); // actorStalled.gradNorm
  });

  it("shows a value from the draft and a refused value's issue under its field", () => {
    const issues = new Map([["trainer.advisories.klBlowup.max", [{ path: "trainer.advisories.klBlowup.max", message: "Too small: expected number to be >0" }]]]);
    const html = render({ trainer: { advisories: { klBlowup: { max: 0 } } } }, issues as unknown as ComposerState["issues"]);
    expect(html).toContain('data-testid="issue-trainer.advisories.klBlowup.max"');
    expect(html).toContain("Too small: expected number to be &gt;0");
    expect(html).toMatch(/aria-invalid="true"[^>]*value="0"|value="0"[^>]*aria-invalid="true"/);
  });
});
