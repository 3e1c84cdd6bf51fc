import type { ApiFieldIssue, ApiProblem } from "@troupe/contracts";

/**
 * RFC 9457 problem details: every error of the REST API is `application/problem+json` with a
 * stable `type`, the HTTP `status`, a one-line `detail`, and (for validation) every field at fault
 * in `errors`. Nothing else leaves the server: no stack traces, no driver messages.
 */

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** Problem `type` URIs (relative, resolved against the API; documented at /api/v1/docs). */
export const PROBLEM_TYPES = {
  validation: { type: "/api/v1/problems/validation", title: "Validation failed" },
  unauthorized: { type: "/api/v1/problems/unauthorized", title: "Missing or invalid API token" },
  forbidden: { type: "/api/v1/problems/forbidden", title: "The token's user may not do this" },
  notFound: { type: "/api/v1/problems/not-found", title: "Not found" },
  conflict: { type: "/api/v1/problems/conflict", title: "Conflict" },
  tooLarge: { type: "/api/v1/problems/too-large", title: "Request body too large" },
  unsupportedMediaType: { type: "/api/v1/problems/unsupported-media-type", title: "Unsupported media type" },
  internal: { type: "/api/v1/problems/internal", title: "Internal server error" },
  unavailable: { type: "/api/v1/problems/unavailable", title: "Service unavailable" },
} as const;
export type ProblemKind = keyof typeof PROBLEM_TYPES;

/** Thrown by handlers and helpers; `apiHandler` turns it into a problem response. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly kind: ProblemKind,
    detail: string,
    readonly errors?: ApiFieldIssue[],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = "ApiError";
  }

  static validation(issues: ApiFieldIssue[], prefix = "invalid request"): ApiError {
    const where = (i: ApiFieldIssue) => (i.line ? ` (line ${i.line}${i.column ? `, column ${i.column}` : ""})` : "");
    const detail = `${prefix}: ${issues.map((i) => `${i.path}${where(i)}: ${i.message}`).join("; ")}`;
    return new ApiError(400, "validation", detail, issues);
  }

  static forbidden(detail: string): ApiError {
    return new ApiError(403, "forbidden", detail);
  }

  static unavailable(detail: string): ApiError {
    return new ApiError(503, "unavailable", detail, undefined, { "retry-after": "5" });
  }

  static notFound(detail: string): ApiError {
    return new ApiError(404, "notFound", detail);
  }

  static unauthorized(detail: string): ApiError {
    // RFC 6750: tell the client which scheme to use.
    return new ApiError(401, "unauthorized", detail, undefined, { "www-authenticate": 'Bearer realm="troupe"' });
  }
}

export function problemBody(error: ApiError, instance?: string): ApiProblem {
  const { type, title } = PROBLEM_TYPES[error.kind];
  return {
    type,
    title,
    status: error.status,
    detail: error.message,
    ...(instance ? { instance } : {}),
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

export function problemResponse(error: ApiError, instance?: string): Response {
  return new Response(JSON.stringify(problemBody(error, instance)), {
    status: error.status,
    headers: { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", ...error.headers },
  });
}
