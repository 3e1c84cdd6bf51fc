import type { Db } from "../../../server/db";
import { SESSION_COOKIE } from "../lib/sessionCookieName";
import type { Role } from "../lib/roles";
import { isSecretShaped, newSecret, sha256Hex } from "./secrets";

/**
 * Database sessions in the style Lucia's guide describes: the cookie holds a random secret, the
 * `Session` row is keyed by its sha256, and every request looks the row up (so signing out, a
 * disabled user or a changed role takes effect on the next request, not when a token expires).
 */

export { SESSION_COOKIE };
export const SESSION_DAYS = 30;
const SESSION_MS = SESSION_DAYS * 24 * 60 * 60 * 1000;

export interface AuthUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

export const authUserSelect = { id: true, email: true, name: true, role: true, disabledAt: true } as const;

export async function createSession(db: Db, userId: string): Promise<{ secret: string; expiresAt: Date }> {
  const secret = newSecret();
  const expiresAt = new Date(Date.now() + SESSION_MS);
  await db.session.create({ data: { id: sha256Hex(secret), userId, expiresAt } });
  return { secret, expiresAt };
}

/** The signed-in user of this cookie secret, or null (unknown, expired, or the user is disabled). */
export async function validateSession(db: Db, secret: string): Promise<AuthUser | null> {
  if (!isSecretShaped(secret)) return null;
  const session = await db.session.findUnique({
    where: { id: sha256Hex(secret) },
    select: { expiresAt: true, user: { select: authUserSelect } },
  });
  if (!session || session.expiresAt.getTime() <= Date.now() || session.user.disabledAt) return null;
  const { disabledAt: _disabled, ...user } = session.user;
  return user;
}

export async function deleteSession(db: Db, secret: string): Promise<void> {
  if (isSecretShaped(secret)) await db.session.deleteMany({ where: { id: sha256Hex(secret) } });
}

/**
 * `Set-Cookie` for a session: httpOnly (no script reads it), SameSite=Lax (not sent on cross-site
 * POSTs), Secure whenever the request came over https (directly or through a TLS-terminating proxy
 * that says so). Plain http is left without Secure only so a loopback or LAN install without TLS
 * can sign in at all; the README says to put TLS in front of anything reachable by others.
 */
export function sessionCookie(secret: string, expiresAt: Date, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${secret}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Expires=${expiresAt.toUTCString()}`,
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

export function clearedSessionCookie(secure: boolean): string {
  return [`${SESSION_COOKIE}=`, "Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=0", ...(secure ? ["Secure"] : [])].join("; ");
}

/** Whether the browser reached us over https (the proxy's X-Forwarded-Proto counts). */
export function isHttps(request: Request): boolean {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return forwarded === "https" || new URL(request.url).protocol === "https:";
}

/** The session cookie's value in a `Cookie` header, or null. */
export function sessionSecretFromCookieHeader(header: string | null): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}
