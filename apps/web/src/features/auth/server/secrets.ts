import { createHash, randomBytes } from "node:crypto";

/** 32 random bytes, base64url: the secret half of a session cookie or an invitation link. */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** What is stored instead of a secret: a database leak does not hand out sessions or invitations. */
export function sha256Hex(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Shape check before any lookup, so junk never reaches the database. */
export function isSecretShaped(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}
