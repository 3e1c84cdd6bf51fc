import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Db } from "../../../server/db";

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
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const recordSelect = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true } as const;

export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

export function displayPrefix(token: string): string {
  return token.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** Create a token; the returned `token` is the only time the secret exists outside the caller. */
export async function createApiToken(db: Db, name: string): Promise<{ token: string; record: TokenRecord }> {
  const token = generateToken();
  const record = await db.apiToken.create({
    data: { name, hash: hashToken(token), prefix: displayPrefix(token) },
    select: recordSelect,
  });
  return { token, record };
}

/** Every token, newest first, revoked ones included (they stay listed, marked revoked). */
export function listApiTokens(db: Db): Promise<TokenRecord[]> {
  return db.apiToken.findMany({ select: recordSelect, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
}

/** Revoke a token; false when no such token exists. Revoking twice keeps the first time. */
export async function revokeApiToken(db: Db, id: string): Promise<TokenRecord | null> {
  await db.apiToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
  return db.apiToken.findUnique({ where: { id }, select: recordSelect });
}

/** How often `lastUsedAt` is written at most: a busy CI pipeline should not write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The active token this bearer secret belongs to, or null. Reads one indexed row set (by prefix);
 * writes nothing unless the token is valid (then `lastUsedAt`, at most once a minute).
 */
export async function authenticateToken(db: Db, token: string): Promise<TokenRecord | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const candidates = await db.apiToken.findMany({
    where: { prefix: displayPrefix(token) },
    select: { ...recordSelect, hash: true },
  });
  const presented = Buffer.from(hashToken(token), "hex");
  let match: (TokenRecord & { hash: string }) | null = null;
  for (const candidate of candidates) {
    const stored = Buffer.from(candidate.hash, "hex");
    // Every candidate is compared (no early exit), each in constant time.
    if (stored.length === presented.length && timingSafeEqual(stored, presented)) match = candidate;
  }
  if (!match || match.revokedAt) return null;
  const now = new Date();
  if (!match.lastUsedAt || now.getTime() - match.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db.apiToken.update({ where: { id: match.id }, data: { lastUsedAt: now } });
    match.lastUsedAt = now;
  }
  const { hash: _hash, ...record } = match;
  return record;
}
