import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderTemplate, templateFields } from "../src/features/designer/lib/templatePreview";

/** Cases whose text jinja2 printed (gpu-runtime/tests/test_template_cases.py checks them against jinja2). */
type Cases = {
  row: Record<string, unknown>;
  render: { name: string; template: string; text: string }[];
  fail: { name: string; template: string; message: string }[];
};
const cases = JSON.parse(readFileSync(join(__dirname, "../../../packages/contracts/fixtures/template-cases.json"), "utf8")) as Cases;

describe("template preview prints what the runtime's jinja2 (StrictUndefined) prints", () => {
  for (const c of cases.render) {
    it(`renders: ${c.name}`, () => {
      expect(renderTemplate(c.template, cases.row)).toEqual({ ok: true, text: c.text });
    });
  }
  for (const c of cases.fail) {
    it(`refuses with jinja2's message: ${c.name}`, () => {
      expect(renderTemplate(c.template, cases.row)).toEqual({ ok: false, error: c.message });
    });
  }

  it("a syntax error names its line and column", () => {
    const r = renderTemplate("Hello\n{{ letter ", { letter: "k" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/^line 2, column 11: expected variable end/);
  });

  it("never builds code from text (the CSP forbids eval and new Function)", () => {
    const original = globalThis.Function;
    const trap = new Proxy(original, {
      construct() {
        throw new Error("new Function called");
      },
      apply() {
        throw new Error("Function called");
      },
    });
    globalThis.Function = trap;
    try {
      for (const c of cases.render) expect(renderTemplate(c.template, cases.row).ok).toBe(true);
    } finally {
      globalThis.Function = original;
    }
  });

  it("a tag the preview does not know is named, not rendered differently", () => {
    const r = renderTemplate("{% macro m() %}x{% endmacro %}", {});
    expect(!r.ok && r.error).toMatch(/cannot show "macro"/);
  });

  it("lists the fields a template reads", () => {
    expect(templateFields("{{ prompt }} {% if answer %}{{ answer.x }}{% endif %} {%- for w in words %}")).toEqual(["prompt", "answer", "words"]);
  });
});
