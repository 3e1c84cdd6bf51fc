import { describe, expect, it } from "vitest";
import { renderTemplate, templateFields } from "../src/features/designer/lib/templatePreview";

describe("template preview (nunjucks, set up like the runtime's jinja2 StrictUndefined)", () => {
  it("renders fields, filters and conditions", () => {
    expect(renderTemplate("You answer {{ letter | upper }}.{% if hint %} Hint: {{ hint }}{% endif %}", { letter: "k", hint: "" })).toEqual({
      ok: true,
      text: "You answer K.",
    });
  });

  it("a missing field is an error, as with StrictUndefined (not an empty string)", () => {
    const r = renderTemplate("Say {{ missing }}", { letter: "k" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/undefined/);
  });

  it("a syntax error says so", () => {
    const r = renderTemplate("{{ letter ", { letter: "k" });
    expect(!r.ok && r.error).toMatch(/expected variable end/);
  });

  it("lists the fields a template reads", () => {
    expect(templateFields("{{ prompt }} {% if answer %}{{ answer.x }}{% endif %} {%- for w in words %}")).toEqual(["prompt", "answer", "words"]);
  });
});
