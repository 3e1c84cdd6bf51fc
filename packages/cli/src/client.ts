import { ApiProblem } from "@troupe/contracts";
import type { z } from "zod";
import { CliError, EXIT } from "./exitCodes";

/**
 * A small client of the Troupe REST API (`/api/v1`). Every failure becomes a `CliError` with one
 * readable line: connection problems name the URL, problem+json answers are shown with their fields.
 * JSON answers are read with the API's own schemas (`@troupe/contracts`), so a server that answers
 * something else is named as such instead of failing later on a missing field.
 */

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
}

export class ApiClient {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  url(path: string, query: Record<string, string | number | undefined> = {}): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.baseUrl}/api/v1${path}${qs ? `?${qs}` : ""}`;
  }

  async request(
    method: "GET" | "POST" | "DELETE",
    path: string,
    options: { query?: Record<string, string | number | undefined>; body?: string; contentType?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const url = this.url(path, options.query);
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          accept: "application/json, text/csv, application/problem+json",
          ...(options.contentType ? { "content-type": options.contentType } : {}),
          ...options.headers,
        },
        body: options.body,
      });
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : error instanceof Error ? error.message : String(error);
      throw new ConnectionError(`cannot reach ${this.baseUrl} (${method} ${path}): ${cause}`);
    }
    const text = await response.text().catch(() => "");
    if (response.ok) return { status: response.status, headers: response.headers, text };
    throw problemError(method, path, response.status, text);
  }

  async json<S extends z.ZodType>(
    schema: S,
    method: "GET" | "POST" | "DELETE",
    path: string,
    options: Parameters<ApiClient["request"]>[2] = {},
  ): Promise<z.output<S>> {
    return parseAnswer(schema, method, path, await this.request(method, path, options));
  }
}

/** A JSON answer read with its schema; anything else is a one-line error naming the first field at fault. */
export function parseAnswer<S extends z.ZodType>(schema: S, method: string, path: string, response: ApiResponse): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(response.text);
  } catch {
    throw new CliError(`${method} ${path}: the server answered ${response.status} with a body that is not JSON`);
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length ? issue.path.join(".") : "(body)";
  throw new CliError(`${method} ${path}: the server's answer is not what this CLI expects (${field}: ${issue.message}); is the server a different version?`);
}

/** The server could not be reached at all (worth a retry while waiting). */
export class ConnectionError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = "ConnectionError";
  }
}

/** An HTTP error answer; `status` tells a 5xx (worth a retry) from a 4xx (not). */
export class HttpError extends CliError {
  constructor(
    message: string,
    readonly status: number,
    details: string[],
  ) {
    super(message, EXIT.usage, details);
    this.name = "HttpError";
  }
}

function problemError(method: string, path: string, status: number, text: string): HttpError {
  // Partial: a proxy in front of the server may answer with an error body of its own.
  let problem: Partial<ApiProblem> | null = null;
  try {
    problem = ApiProblem.partial().parse(JSON.parse(text));
  } catch {
    problem = null;
  }
  const hint = status === 401 ? " (check TROUPE_TOKEN / --token; create a token at /settings/tokens)" : "";
  if (!problem) {
    return new HttpError(`${method} ${path} failed with HTTP ${status}${hint}`, status, []);
  }
  const details = (problem.errors ?? []).map((e) => {
    const where = e.line ? ` (line ${e.line}${e.column ? `, column ${e.column}` : ""})` : "";
    return `${e.path}${where}: ${e.message}`;
  });
  const summary = problem.errors?.length ? (problem.title ?? "validation failed") : (problem.detail ?? problem.title ?? "error");
  return new HttpError(`HTTP ${status}: ${summary}${hint}`, status, details);
}
