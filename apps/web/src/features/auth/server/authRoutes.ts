import type { z } from "zod";
import { decodeUtf8, mediaType, readBodyBytes } from "../../api/server/body";
import { ApiError } from "../../api/server/problem";
import { getDb } from "../../../server/db";
import { dependencyDown } from "../../../server/dependencyErrors";
import { AcceptInviteBody, SignInBody } from "./schemas";
import { clearedSessionCookie, deleteSession, isHttps, sessionCookie, sessionSecretFromCookieHeader } from "./sessions";
import { acceptInvite, signIn } from "./users";
import { HashBusyError } from "./hashGate";
import { signInLimiter } from "./signInLimiter";
import { clientAddress, type SignInAdmission } from "./signInLimits";

/**
 * The routes that set or clear the session cookie: `/api/auth/sign-in`, `/sign-out`,
 * `/accept-invite`. Each takes JSON (answers JSON) or a form post (answers a 303 redirect, so the
 * pages work without JavaScript). They are the only unauthenticated writes.
 */

const MAX_BODY_BYTES = 16 * 1024;

/** A same-site path to go to after signing in; anything else (`//evil`, `https://…`) becomes `/`. */
export function safeNextPath(value: unknown): string {
  if (typeof value !== "string" || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  return /^[\x21-\x7e]{1,2000}$/.test(value) ? value : "/";
}

interface ParsedBody {
  form: boolean;
  fields: Record<string, unknown>;
}

async function readBody(request: Request): Promise<ParsedBody> {
  const type = mediaType(request);
  const text = decodeUtf8(await readBodyBytes(request, MAX_BODY_BYTES));
  if (type === "application/x-www-form-urlencoded") {
    return { form: true, fields: Object.fromEntries(new URLSearchParams(text)) };
  }
  if (type !== "application/json") throw new ApiError(415, "unsupportedMediaType", "send application/json or a form (application/x-www-form-urlencoded)");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw ApiError.validation([{ path: "(root)", message: "the body is not valid JSON" }], "invalid body");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw ApiError.validation([{ path: "(root)", message: "must be an object" }], "invalid body");
  return { form: false, fields: value as Record<string, unknown> };
}

function parse<S extends z.ZodType>(schema: S, fields: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(fields);
  if (result.success) return result.data;
  throw ApiError.validation(result.error.issues.map((i) => ({ path: i.path.join(".") || "(root)", message: i.message })));
}

function redirect(location: string, cookie?: string): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  if (cookie) headers.append("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}

function json(body: unknown, status: number, cookie?: string): Response {
  const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
  if (cookie) headers.append("set-cookie", cookie);
  return new Response(JSON.stringify(body), { status, headers });
}

function errorResponse(error: unknown, form: boolean, back: string): Response {
  if (error instanceof HashBusyError) {
    if (form) return redirect(`${back}${back.includes("?") ? "&" : "?"}error=busy`);
    const response = json({ error: error.message }, 503);
    response.headers.set("retry-after", "1");
    return response;
  }
  const down = dependencyDown(error);
  const apiError = error instanceof ApiError ? error : down ? new ApiError(503, "unavailable", `${down} is unreachable; try again shortly`) : null;
  if (!apiError) {
    console.error("[auth] unexpected error:", error);
    return form ? redirect(`${back}${back.includes("?") ? "&" : "?"}error=internal`) : json({ error: "internal error" }, 500);
  }
  if (form) return redirect(`${back}${back.includes("?") ? "&" : "?"}error=${apiError.status === 503 ? "unavailable" : "invalid"}`);
  return json({ error: apiError.message, errors: apiError.errors }, apiError.status);
}

/** 429 with Retry-After (JSON), or back to the form with `error=throttled`. */
function throttled(admission: Exclude<SignInAdmission, { allowed: true }>, form: boolean, next: string): Response {
  const retryAfter = String(admission.retryAfterSeconds);
  if (form) {
    const response = redirect(`/sign-in?error=throttled&next=${encodeURIComponent(next)}`);
    response.headers.set("retry-after", retryAfter);
    return response;
  }
  const response = json({ error: `too many sign-in attempts for this ${admission.scope === "account" ? "account" : "address"}; try again in ${retryAfter} s` }, 429);
  response.headers.set("retry-after", retryAfter);
  return response;
}

export async function handleSignIn(request: Request): Promise<Response> {
  let form = mediaType(request) === "application/x-www-form-urlencoded";
  let next = "/";
  try {
    const body = await readBody(request);
    form = body.form;
    next = safeNextPath(body.fields.next);
    const { email, password } = parse(SignInBody, body.fields);
    // Counted before the password is hashed: a refused attempt costs no scrypt.
    const address = clientAddress(request);
    const admission = await signInLimiter().admit(email, address);
    if (!admission.allowed) return throttled(admission, form, next);
    const result = await signIn(getDb(), email, password);
    if (!result) {
      if (form) return redirect(`/sign-in?error=credentials&next=${encodeURIComponent(next)}`);
      return json({ error: "wrong email or password" }, 401);
    }
    await signInLimiter().succeeded(email, address);
    const cookie = sessionCookie(result.secret, result.expiresAt, isHttps(request));
    return form ? redirect(next, cookie) : json({ user: result.user }, 200, cookie);
  } catch (error) {
    return errorResponse(error, form, `/sign-in?next=${encodeURIComponent(next)}`);
  }
}

export async function handleSignOut(request: Request): Promise<Response> {
  const form = mediaType(request) === "application/x-www-form-urlencoded";
  const secret = sessionSecretFromCookieHeader(request.headers.get("cookie"));
  try {
    if (secret) await deleteSession(getDb(), secret);
  } catch (error) {
    return errorResponse(error, form, "/sign-in");
  }
  const cookie = clearedSessionCookie(isHttps(request));
  return form ? redirect("/sign-in", cookie) : json({ signedOut: true }, 200, cookie);
}

export async function handleAcceptInvite(request: Request): Promise<Response> {
  let form = mediaType(request) === "application/x-www-form-urlencoded";
  let back = "/sign-in";
  try {
    const body = await readBody(request);
    form = body.form;
    if (typeof body.fields.secret === "string" && /^[A-Za-z0-9_-]{1,100}$/.test(body.fields.secret)) back = `/invite/${body.fields.secret}`;
    const { secret, password } = parse(AcceptInviteBody, body.fields);
    const result = await acceptInvite(getDb(), secret, password);
    if (!result) {
      if (form) return redirect(`${back}?error=expired`);
      return json({ error: "this invitation link is invalid, used or expired: ask an administrator for a new one" }, 400);
    }
    const cookie = sessionCookie(result.secret, result.expiresAt, isHttps(request));
    return form ? redirect("/", cookie) : json({ user: result.user }, 200, cookie);
  } catch (error) {
    return errorResponse(error, form, back);
  }
}
