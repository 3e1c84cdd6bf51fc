import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Db } from "../../../server/db";
import { type AuthUser, authUserSelect } from "../../auth/server/sessions";

/**
 * API tokens: `troupe_<43 base64url chars>` (32 random bytes). Only the sha256 is stored. The first
 * characters (`prefix`) find candidate rows through an index; the hash is then compared with
 * `timingSafeEqual`, so the time a check takes does not depend on how much of a guess was right.
 */

export const TOKEN_PREFIX = "troupe_";
/** `troupe_` + 8 characters of the random part: enough to tell tokens apart, useless to an attacker. */
const DISPLAY_PREFIX_LENGTH = TOKEN_PREFIX.length + 8;
const TOKEN_PATTERN = /^troupe_[A-Za-z0-9_-]{43}$/;

export interface TokenRecord {
  id: string;
  name: string;
  /** The user the token acts as (its role is that user's role at the time of each request). */
  owner: { id: string; email: string };
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}


export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

export function displayPrefix(token: string): string {
  return token.slice(0, DISPLAY_PREFIX_LENGTH);
}

// Prisma names the relation `user`; the API calls it `owner` (the user a token acts as).
const dbSelect = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true, user: { select: { id: true, email: true } } } as const;
type DbRecord = { id: string; name: string; prefix: string; createdAt: Date; lastUsedAt: Date | null; revokedAt: Date | null; user: { id: string; email: string } };
const toRecord = ({ user, ...rest }: DbRecord): TokenRecord => ({ ...rest, owner: user });

/** Create a token acting as `userId`; the returned `token` is the only time the secret exists outside the caller. */
export async function createApiToken(db: Db, userId: string, name: string): Promise<{ token: string; record: TokenRecord }> {
  const token = generateToken();
  const record = await db.apiToken.create({
    data: { name, userId, hash: hashToken(token), prefix: displayPrefix(token) },
    select: dbSelect,
  });
  return { token, record: toRecord(record) };
}

/**
 * Tokens newest first, revoked ones included (they stay listed, marked revoked): one user's own,
 * or everyone's (`ownerId` null, for administrators).
 */
export async function listApiTokens(db: Db, ownerId: string | null): Promise<TokenRecord[]> {
  const rows = await db.apiToken.findMany({
    where: ownerId === null ? {} : { userId: ownerId },
    select: dbSelect,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
  return rows.map(toRecord);
}

/**
 * Revoke a token; null when no such token exists among those `ownerId` may revoke (their own; every
 * token when null). Revoking twice keeps the first time.
 */
export async function revokeApiToken(db: Db, id: string, ownerId: string | null): Promise<TokenRecord | null> {
  const where = ownerId === null ? { id } : { id, userId: ownerId };
  await db.apiToken.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt: new Date() } });
  const row = await db.apiToken.findFirst({ where, select: dbSelect });
  return row ? toRecord(row) : null;
}

/** How often `lastUsedAt` is written at most: a busy CI pipeline should not write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The active token this bearer secret belongs to, with the user it acts as, or null (unknown,
 * revoked, or its owner is disabled). Reads one indexed row set (by prefix); writes nothing unless
 * the token is valid (then `lastUsedAt`, at most once a minute).
 */
export async function authenticateToken(db: Db, token: string): Promise<{ record: TokenRecord; user: AuthUser } | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const candidates = await db.apiToken.findMany({
    where: { prefix: displayPrefix(token) },
    select: { ...dbSelect, hash: true, user: { select: authUserSelect } },
  });
  const presented = Buffer.from(hashToken(token), "hex");
  let match: (typeof candidates)[number] | null = null;
  for (const candidate of candidates) {
    const stored = Buffer.from(candidate.hash, "hex");
    // Every candidate is compared (no early exit), each in constant time.
    if (stored.length === presented.length && timingSafeEqual(stored, presented)) match = candidate;
  }
  if (!match || match.revokedAt || match.user.disabledAt) return null;
  const now = new Date();
  if (!match.lastUsedAt || now.getTime() - match.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db.apiToken.update({ where: { id: match.id }, data: { lastUsedAt: now } });
    match.lastUsedAt = now;
  }
  const { hash: _hash, user, ...rest } = match;
  const { disabledAt: _disabled, ...authUser } = user;
  return { record: { ...rest, owner: { id: user.id, email: user.email } }, user: authUser };
}
