import type { Db } from "@troupe/db";
import type { Role } from "../../src/features/auth/lib/roles";
import type { RequestAuth } from "../../src/features/auth/server/requestAuth";
import { createSession, SESSION_COOKIE } from "../../src/features/auth/server/sessions";
import { createApiToken } from "../../src/features/tokens/server/tokens";
import { uniqueId } from "./ids";

/** A real user row with a role, for tests that need who-is-calling (removed with `deleteTestUsers`). */
export interface TestUser {
  auth: RequestAuth;
  id: string;
  email: string;
  role: Role;
}

export async function createTestUser(db: Db, role: Role, label = "vitest"): Promise<TestUser> {
  const email = `${uniqueId(label)}@troupe.test`;
  const row = await db.user.create({ data: { email, name: label, role, passwordHash: null } });
  return { id: row.id, email, role, auth: { user: { id: row.id, email, name: label, role }, via: "session" } };
}

/** `Cookie` header value of a fresh session of `user`. */
export async function sessionCookieFor(db: Db, userId: string): Promise<string> {
  const { secret } = await createSession(db, userId);
  return `${SESSION_COOKIE}=${secret}`;
}

/** An API token owned by `user` (so it carries their role). */
export async function tokenFor(db: Db, userId: string, label = "vitest-token"): Promise<{ token: string; tokenId: string }> {
  const { token, record } = await createApiToken(db, userId, uniqueId(label));
  return { token, tokenId: record.id };
}

export async function deleteTestUsers(db: Db, ids: string[]): Promise<void> {
  // Sessions and tokens (and their idempotency keys) go with the user (ON DELETE CASCADE).
  if (ids.length > 0) await db.user.deleteMany({ where: { id: { in: ids } } });
}
