/**
 * The API reference page: plain HTML rendered on the server from the OpenAPI document (operations,
 * parameters, bodies, responses, schemas). Self-contained: inline CSS, no scripts, no CDN, so it
 * works in air-gapped installs and always matches `/api/v1/openapi.json`.
 */

type Json = Record<string, unknown>;

const esc = (s: unknown) =>
  String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Escaped text with `code` spans. */
const prose = (s: unknown) => esc(s).replace(/`([^`]+)`/g, "<code>$1</code>");

const refName = (ref: string) => ref.split("/").pop() ?? ref;

/** A short type label for a JSON Schema, with links to named schemas. */
function typeLabel(schema: Json | undefined): string {
  if (!schema) return "";
  if (typeof schema.$ref === "string") {
    const name = refName(schema.$ref);
    return `<a href="#schema-${esc(name)}">${esc(name)}</a>`;
  }
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(typeLabel).join(" | ");
  if (Array.isArray(schema.oneOf)) return (schema.oneOf as Json[]).map(typeLabel).join(" | ");
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(" | ");
  const type = Array.isArray(schema.type) ? (schema.type as string[]).join(" | ") : String(schema.type ?? "any");
  if (schema.type === "array" && schema.items) return `${typeLabel(schema.items as Json)}[]`;
  const format = schema.format ? ` (${esc(schema.format)})` : "";
  return `${esc(type)}${format}`;
}

function constraints(schema: Json): string {
  const parts: string[] = [];
  for (const key of ["minimum", "maximum", "minLength", "maxLength", "maxItems", "pattern", "default"]) {
    const v = schema[key];
    if (v !== undefined && Math.abs(Number(v)) !== Number.MAX_SAFE_INTEGER) parts.push(`${key} ${esc(JSON.stringify(v))}`);
  }
  return parts.length ? `<div class="muted">${parts.join(", ")}</div>` : "";
}

function parametersTable(params: Json[]): string {
  if (params.length === 0) return "";
  const rows = params
    .map((p) => {
      const schema = (p.schema as Json) ?? {};
      return `<tr><td><code>${esc(p.name)}</code>${p.required ? ' <span class="req">required</span>' : ""}</td><td>${esc(p.in)}</td><td>${typeLabel(schema)}${constraints(schema)}</td><td>${prose(p.description)}</td></tr>`;
    })
    .join("");
  return `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>description</th></tr>${rows}</table>`;
}

function contentList(content: Json | undefined): string {
  if (!content) return "";
  return Object.entries(content)
    .map(([type, c]) => `<code>${esc(type)}</code>: ${typeLabel((c as Json).schema as Json)}`)
    .join("<br>");
}

/** Each media type's example body, ready to copy (the first one open). */
function examples(content: Json | undefined): string {
  return Object.entries(content ?? {})
    .filter(([, media]) => (media as Json).example !== undefined)
    .map(([type, media], i) => {
      const example = (media as Json).example;
      const text = typeof example === "string" ? example : JSON.stringify(example, null, 2);
      return `<details${i === 0 ? " open" : ""} class="example"><summary>Example <code>${esc(type)}</code></summary><pre>${esc(text)}</pre></details>`;
    })
    .join("");
}

function operationHtml(path: string, method: string, op: Json): string {
  const body = op.requestBody as Json | undefined;
  const responses = Object.entries((op.responses as Json) ?? {})
    .map(([status, r]) => `<tr><td><b>${esc(status)}</b></td><td>${prose((r as Json).description)}</td><td>${contentList((r as Json).content as Json)}</td></tr>`)
    .join("");
  const auth = Array.isArray(op.security) && op.security.length === 0 ? '<span class="open">no token</span>' : '<span class="lock">Bearer token</span>';
  return `<section class="op" id="op-${esc(op.operationId)}">
<h3><span class="method ${esc(method)}">${esc(method.toUpperCase())}</span> <code>/api/v1${esc(path)}</code> ${auth}</h3>
<p><b>${prose(op.summary)}</b></p><p>${prose(op.description)}</p>
${parametersTable((op.parameters as Json[]) ?? [])}
${body ? `<h4>Request body</h4><p>${prose(body.description)}</p><p>${contentList(body.content as Json)}</p>${examples(body.content as Json)}` : ""}
<h4>Responses</h4><table><tr><th>status</th><th>description</th><th>body</th></tr>${responses}</table>
</section>`;
}

function schemaHtml(name: string, schema: Json): string {
  const props = (schema.properties as Record<string, Json> | undefined) ?? {};
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const rows = Object.entries(props)
    .map(([prop, s]) => `<tr><td><code>${esc(prop)}</code>${required.has(prop) ? ' <span class="req">required</span>' : ""}</td><td>${typeLabel(s)}${constraints(s)}</td><td>${prose(s.description)}</td></tr>`)
    .join("");
  const table = rows ? `<table><tr><th>field</th><th>type</th><th>description</th></tr>${rows}</table>` : `<p>${typeLabel(schema)}</p>`;
  return `<section class="schema" id="schema-${esc(name)}"><h3>${esc(name)}</h3><p>${prose(schema.description)}</p>${table}
<details><summary>JSON Schema</summary><pre>${esc(JSON.stringify(schema, null, 2))}</pre></details></section>`;
}

export function renderApiDocs(doc: Json): string {
  const info = doc.info as Json;
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const schemas = ((doc.components as Json).schemas as Record<string, Json>) ?? {};
  const ops = Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const toc = ops
    .map(({ path, method, op }) => `<li><a href="#op-${esc(op.operationId)}"><span class="method ${esc(method)}">${esc(method.toUpperCase())}</span> /api/v1${esc(path)}</a> — ${prose(op.summary)}</li>`)
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} — reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:1000px;margin:0 auto;padding:24px;color:#1d2330}
code,pre{font:13px ui-monospace,monospace;background:#f2f4f8;border-radius:4px;padding:1px 4px}
pre{padding:12px;overflow:auto}table{border-collapse:collapse;width:100%;margin:8px 0}
th,td{border:1px solid #dde2ea;padding:6px 8px;text-align:left;vertical-align:top}th{background:#f7f8fb}
.method{display:inline-block;min-width:44px;text-align:center;border-radius:4px;color:#fff;font-size:12px;padding:1px 6px}
.get{background:#2f7d4f}.post{background:#2857a4}.delete{background:#a4282b}.req{color:#b3261e;font-size:12px}.muted{color:#667;font-size:12px}
.lock,.open{font-size:12px;border:1px solid #ccd;border-radius:4px;padding:1px 6px;font-weight:normal}
section{border-top:1px solid #e4e7ee;padding-top:8px;margin-top:20px}
</style></head><body>
<h1>${esc(info.title)} <small class="muted">v${esc(info.version)}, OpenAPI ${esc(doc.openapi)}</small></h1>
<p>${prose(info.description)}</p>
<p>Machine-readable: <a href="/api/v1/openapi.json"><code>/api/v1/openapi.json</code></a>. Base URL: <code>/api/v1</code>.</p>
<h2>Operations</h2><ul>${toc}</ul>
${ops.map(({ path, method, op }) => operationHtml(path, method, op)).join("\n")}
<h2>Schemas</h2>
${Object.entries(schemas).map(([name, s]) => schemaHtml(name, s)).join("\n")}
</body></html>`;
}
