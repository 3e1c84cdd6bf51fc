import nunjucks from "nunjucks";

/**
 * Renders a system-prompt or prompt template on a sample row in the browser with nunjucks, a
 * Jinja-compatible engine, so the preview updates on every key press (a runner round trip per key
 * would not). The runtime renders with Python's jinja2 (StrictUndefined); nunjucks is set up the
 * same way (a missing field is an error, no HTML escaping). Where they differ: Python-only
 * expressions and methods (`x.split()`, list comprehensions), jinja2-only filters (`tojson`,
 * `items` on dicts) and whitespace control details. The run uses jinja2; a template that renders
 * here and not there fails the run's spec check with the field named.
 */
const env = new nunjucks.Environment(null, { throwOnUndefined: true, autoescape: false });

export type RenderResult = { ok: true; text: string } | { ok: false; error: string };

export function renderTemplate(template: string, row: Record<string, unknown>): RenderResult {
  try {
    return { ok: true, text: env.renderString(template, row) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // nunjucks prefixes "(unknown path)" since a string template has no file; drop it.
    return { ok: false, error: message.replace(/^\(unknown path\)\s*/, "").replace(/\s+/g, " ").trim() };
  }
}

/** Field names a template uses as `{{ name }}` / `{{ name.x }}` / `{% if name %}` (for "unknown field" hints). */
export function templateFields(template: string): string[] {
  const out = new Set<string>();
  for (const m of template.matchAll(/\{[{%]-?\s*(?:if\s+|for\s+\w+\s+in\s+)?([A-Za-z_][A-Za-z0-9_]*)/g)) out.add(m[1]!);
  return [...out].filter((f) => !["if", "for", "endif", "endfor", "else", "elif", "set", "not", "loop"].includes(f));
}
