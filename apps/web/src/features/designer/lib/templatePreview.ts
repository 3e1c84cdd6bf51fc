import parser from "nunjucks/src/parser";
import { Renderer } from "./jinja/evaluate";

/**
 * Renders a system-prompt or prompt template on a sample row in the browser, so the preview updates on
 * every key press (a runner round trip per key would not). The runtime renders with Python's jinja2
 * (StrictUndefined, keep_trailing_newline); the preview parses with nunjucks' parser (the same Jinja
 * grammar) and walks the tree itself with jinja2's meaning (./jinja), because nunjucks' renderer compiles
 * to `new Function`, which the page's CSP forbids. packages/contracts/fixtures/template-cases.json holds
 * cases checked against jinja2 (gpu-runtime/tests) and against this function (apps/web/test), so the two
 * print the same text. What the preview does not know (macros, includes, rare filters) it says so.
 */
export type RenderResult = { ok: true; text: string } | { ok: false; error: string };

type Located = { lineno?: unknown; colno?: unknown; message: string };

/** nunjucks' parse errors carry a 1-based line and column, except at the end of the text (none: use the end). */
function where(error: Located, template: string): string {
  const lines = template.split("\n");
  const line = typeof error.lineno === "number" ? error.lineno : lines.length;
  const column = typeof error.colno === "number" ? error.colno : lines[lines.length - 1]!.length + 1;
  return `line ${line}, column ${column}: `;
}

export function renderTemplate(template: string, row: Record<string, unknown>): RenderResult {
  let tree;
  try {
    tree = parser.parse(template);
  } catch (error) {
    const e = error instanceof Error ? (error as Error & Located) : { message: String(error) };
    return { ok: false, error: `${where(e, template)}${e.message}`.replace(/\s+/g, " ").trim() };
  }
  try {
    return { ok: true, text: new Renderer(row).render(tree) };
  } catch (error) {
    return { ok: false, error: (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim() };
  }
}

/** Field names a template uses as `{{ name }}` / `{{ name.x }}` / `{% if name %}` (for "unknown field" hints). */
export function templateFields(template: string): string[] {
  const out = new Set<string>();
  for (const m of template.matchAll(/\{[{%]-?\s*(?:if\s+|for\s+\w+\s+in\s+)?([A-Za-z_][A-Za-z0-9_]*)/g)) out.add(m[1]!);
  return [...out].filter((f) => !["if", "for", "endif", "endfor", "else", "elif", "set", "not", "loop"].includes(f));
}
