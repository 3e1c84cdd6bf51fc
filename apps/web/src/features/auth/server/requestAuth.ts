import type { Db } from "../../../server/db";
import { authenticateToken } from "../../tokens/server/tokens";
import { type AuthUser, sessionSecretFromCookieHeader, validateSession } from "./sessions";

/** Who is calling: a signed-in browser (session cookie) or an API token acting as its owner. */
export interface RequestAuth {
  user: AuthUser;
  via: "session" | "token";
  /** The token used, when `via` is "token" (idempotency keys are per token). */
  tokenId?: string;
}

export type BearerResult = { kind: "none" } | { kind: "malformed" } | { kind: "token"; token: string };

/** `Authorization: Bearer <token>`, parsed without touching the database. */
export function bearerOf(request: Request): BearerResult {
  const header = request.headers.get("authorization");
  if (!header) return { kind: "none" };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? { kind: "token", token: match[1]! } : { kind: "malformed" };
}

/**
 * The caller of a request, or null when anonymous. A bearer token wins over a cookie (a CLI never
 * has one; a browser never sends a bearer header on its own). This is the first thing every
 * protected route does: nothing else is read before it answers.
 */
export async function authenticateRequest(db: Db, request: Request): Promise<RequestAuth | null> {
  const bearer = bearerOf(request);
  if (bearer.kind === "malformed") return null;
  if (bearer.kind === "token") {
    const found = await authenticateToken(db, bearer.token);
    return found ? { user: found.user, via: "token", tokenId: found.record.id } : null;
  }
  const secret = sessionSecretFromCookieHeader(request.headers.get("cookie"));
  if (!secret) return null;
  const user = await validateSession(db, secret);
  return user ? { user, via: "session" } : null;
}
