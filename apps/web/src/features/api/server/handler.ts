import { TRPCError } from "@trpc/server";
import type { z } from "zod";
import { formatPath } from "@troupe/contracts";
import { createRequestContext } from "../../../server/api/context";
import { getDb } from "../../../server/db";
import type { TRPCContext } from "../../../server/api/trpc";
import { FieldValidationError } from "../../../server/api/trpc";
import type { RequestAuth } from "../../auth/server/requestAuth";
import { dependencyDown } from "../../../server/dependencyErrors";
import { textProblem } from "../../../server/inputText";
import { requireToken } from "./auth";
import type { OperationDef } from "./operations";
import { ApiError, problemResponse } from "./problem";

/**
 * One wrapper for every REST handler: token check first, then path and query parsed with the
 * operation's zod schemas (the same ones the OpenAPI document is generated from), then the handler.
 * Whatever goes wrong becomes a problem+json response; an unexpected error is logged here and the
 * client gets a generic 500 (never a stack trace).
 */

type Infer<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

export interface HandlerArgs<Op extends OperationDef> {
  request: Request;
  ctx: TRPCContext;
  /** The token's user and the token's id (null on operations without auth). */
  token: Op["auth"] extends false ? null : RequestAuth & { tokenId: string };
  params: Infer<Op["pathParams"]>;
  query: Infer<Op["query"]>;
}

type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> };

function parseWith(schema: z.ZodType | undefined, input: Record<string, unknown>, what: string): unknown {
  if (!schema) return {};
  for (const [key, value] of Object.entries(input)) {
    const problem = textProblem(key) ?? (typeof value === "string" ? textProblem(value) : null);
    if (problem) throw ApiError.validation([{ path: key, message: problem }], `invalid ${what} parameters`);
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw ApiError.validation(
    result.error.issues.map((i) => ({
      path: i.path.length === 0 ? `(${what})` : formatPath(i.path),
      message: i.code === "unrecognized_keys" ? `unknown ${what} parameter(s): ${i.keys.join(", ")}` : i.message,
    })),
    `invalid ${what} parameters`,
  );
}

/** tRPC errors thrown by shared server functions (launch, cancel) keep their meaning over REST. */
function fromTrpc(error: TRPCError): ApiError {
  if (error.cause instanceof FieldValidationError) return ApiError.validation(error.cause.issues);
  switch (error.code) {
    case "NOT_FOUND":
      return ApiError.notFound(error.message);
    case "BAD_REQUEST":
      return ApiError.validation([{ path: "(root)", message: error.message }]);
    case "FORBIDDEN":
      return ApiError.forbidden(error.message);
    case "SERVICE_UNAVAILABLE":
      return ApiError.unavailable(error.message);
    case "CONFLICT":
    case "PRECONDITION_FAILED":
      return new ApiError(409, "conflict", error.message);
    default:
      return new ApiError(500, "internal", "internal error");
  }
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const down = dependencyDown(error);
  if (down) return ApiError.unavailable(`${down} is unreachable; try again shortly`);
  if (error instanceof TRPCError) return fromTrpc(error);
  return new ApiError(500, "internal", "internal error; the server log has the details");
}

export function apiRoute<Op extends OperationDef>(op: Op, handle: (args: HandlerArgs<Op>) => Promise<Response>) {
  return async (request: Request, context: RouteContext): Promise<Response> => {
    const instance = new URL(request.url).pathname;
    try {
      const token = op.auth ? await requireToken(getDb(), request, op.auth) : null;
      const ctx = createRequestContext(token);
      const rawParams = Object.fromEntries(
        Object.entries((await context.params) ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.join("/") : v]),
      );
      const params = parseWith(op.pathParams, rawParams, "path");
      const query = parseWith(op.query, Object.fromEntries(new URL(request.url).searchParams), "query");
      return await handle({ request, ctx, token, params, query } as HandlerArgs<Op>);
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status === 500) console.error(`${request.method} ${instance} failed:`, error);
      return problemResponse(apiError, instance);
    }
  };
}

/** A JSON response whose body is first passed through its documented schema. */
export function jsonResponse<S extends z.ZodType>(schema: S, body: z.input<S>, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(schema.parse(body)), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}
