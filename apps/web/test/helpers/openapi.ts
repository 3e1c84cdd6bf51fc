import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { expect } from "vitest";

/**
 * Validates real responses against the served OpenAPI document (`/api/v1/openapi.json`), not against
 * the zod schemas: the status must be documented for the operation, the media type too, and a JSON
 * body must match the documented schema (ajv, JSON Schema 2020-12, formats checked).
 */

type Json = Record<string, unknown>;
const DOC_ID = "https://troupe.test/openapi.json";
// ajv-formats is CommonJS; its default export arrives wrapped under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

export interface ApiResult {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export class OpenApiChecker {
  private ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly checked: string[] = [];

  constructor(readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOC_ID, components: (doc as { components: Json }).components });
  }

  static async load(baseUrl: string): Promise<OpenApiChecker> {
    const response = await fetch(`${baseUrl}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    return new OpenApiChecker((await response.json()) as Json);
  }

  /** Throws (a test failure) when the response is not what the document says `method template` answers. */
  check(method: string, template: string, result: ApiResult): void {
    const op = ((this.doc.paths as Record<string, Record<string, Json>>)[template] ?? {})[method.toLowerCase()];
    expect(op, `${method} ${template} is not in the OpenAPI document`).toBeDefined();
    const responses = op!.responses as Record<string, Json>;
    const documented = responses[String(result.status)];
    expect(documented, `${method} ${template} answered ${result.status}, which the document does not list (${Object.keys(responses).join(", ")})`).toBeDefined();
    const mediaType = (result.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const content = documented!.content as Record<string, { schema: Json }> | undefined;
    if (!content) return;
    const entry = content[mediaType];
    expect(entry, `${method} ${template} ${result.status} sent ${mediaType}; documented: ${Object.keys(content).join(", ")}`).toBeDefined();
    const schema = JSON.parse(JSON.stringify(entry!.schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`)) as Json;
    const body = mediaType.endsWith("json") ? result.json : result.text;
    const validate = this.ajv.compile(schema);
    const ok = validate(body);
    expect(ok, `${method} ${template} ${result.status} body does not match the document: ${this.ajv.errorsText(validate.errors)}\n${result.text.slice(0, 500)}`).toBe(true);
    this.checked.push(`${method} ${template} ${result.status}`);
  }
}

/** A fetch that returns status, headers, text and parsed JSON (when JSON), and checks it against the document. */
export function apiCaller(baseUrl: string, checker: OpenApiChecker, token?: string) {
  return async function call(
    method: "GET" | "POST" | "DELETE",
    path: string,
    template: string,
    init: { body?: string | Blob; headers?: Record<string, string>; token?: string | null } = {},
  ): Promise<ApiResult> {
    const auth = init.token === null ? undefined : (init.token ?? token);
    const response = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { ...(auth ? { authorization: `Bearer ${auth}` } : {}), ...init.headers },
      body: init.body,
    });
    const text = await response.text();
    let json: unknown = undefined;
    if ((response.headers.get("content-type") ?? "").includes("json")) json = JSON.parse(text);
    const result = { status: response.status, headers: response.headers, text, json };
    checker.check(method, template, result);
    return result;
  };
}
