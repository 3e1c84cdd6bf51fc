import { CliError, EXIT } from "./exitCodes";

/**
 * A small client of the Troupe REST API (`/api/v1`). Every failure becomes a `CliError` with one
 * readable line: connection problems name the URL, problem+json answers are shown with their fields.
 */

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
}

interface Problem {
  title?: string;
  status?: number;
  detail?: string;
  errors?: { path: string; message: string; line?: number; column?: number }[];
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
    method: "GET" | "POST",
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

  async json<T>(method: "GET" | "POST", path: string, options: Parameters<ApiClient["request"]>[2] = {}): Promise<T> {
    const response = await this.request(method, path, options);
    try {
      return JSON.parse(response.text) as T;
    } catch {
      throw new CliError(`${method} ${path}: the server answered ${response.status} with a body that is not JSON`);
    }
  }
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
  let problem: Problem | null = null;
  try {
    problem = JSON.parse(text) as Problem;
  } catch {
    problem = null;
  }
  const hint = status === 401 ? " (check TROUPE_TOKEN / --token; create a token at /settings/tokens)" : "";
  if (!problem || typeof problem !== "object") {
    return new HttpError(`${method} ${path} failed with HTTP ${status}${hint}`, status, []);
  }
  const details = (problem.errors ?? []).map((e) => {
    const where = e.line ? ` (line ${e.line}${e.column ? `, column ${e.column}` : ""})` : "";
    return `${e.path}${where}: ${e.message}`;
  });
  const summary = problem.errors?.length ? (problem.title ?? "validation failed") : (problem.detail ?? problem.title ?? "error");
  return new HttpError(`HTTP ${status}: ${summary}${hint}`, status, details);
}
