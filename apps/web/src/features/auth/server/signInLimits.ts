import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { normaliseEmail } from "./users";

/**
 * How many sign-in attempts an account and a client address may make per window, counted in Redis
 * so every web process shares one count. An attempt is counted before the password is hashed, so
 * a refused attempt costs no scrypt, and a burst sent all at once is counted attempt by attempt. A
 * successful sign-in clears its account's count and gives its address one attempt back.
 *
 * The address is the nearest entry of X-Forwarded-For: Next sets it to the socket's peer when the
 * client sent none. A client that sends its own can pick it; only a reverse proxy that overwrites
 * the header makes the per-address count trustworthy (the per-account count holds regardless).
 */

export interface SignInLimitSettings {
  perAccount: number;
  perAddress: number;
  windowSeconds: number;
}

export type SignInAdmission = { allowed: true } | { allowed: false; scope: "account" | "address"; retryAfterSeconds: number };

const KEY_PREFIX = "troupe:signin";

// Count both keys (the window starts with the first attempt), then say which is over and for how long.
const TAKE = `
local account = redis.call("INCR", KEYS[1])
if account == 1 then redis.call("EXPIRE", KEYS[1], ARGV[3]) end
local address = redis.call("INCR", KEYS[2])
if address == 1 then redis.call("EXPIRE", KEYS[2], ARGV[3]) end
if account > tonumber(ARGV[1]) then return {1, redis.call("TTL", KEYS[1])} end
if address > tonumber(ARGV[2]) then return {2, redis.call("TTL", KEYS[2])} end
return {0, 0}
`;

// A success: the account starts afresh; the address gets one attempt back (never below zero, and a
// key whose window already ended is not brought back without an expiry).
const SUCCEED = `
redis.call("DEL", KEYS[1])
local address = tonumber(redis.call("GET", KEYS[2]) or "0")
if address > 0 then redis.call("DECR", KEYS[2]) end
return 0
`;

const hashed = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);

/** The client's address as this server sees it (see the note above), or "unknown". */
export function clientAddress(request: Request): string {
  const forwarded = request.headers.get("x-forwarded-for");
  const nearest = forwarded?.split(",").map((s) => s.trim()).filter(Boolean).pop();
  return nearest && nearest.length <= 100 ? nearest : "unknown";
}

export class SignInLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly settings: SignInLimitSettings,
  ) {}

  private keys(email: string, address: string): [string, string] {
    // Hashed: no email address or IP is written to Redis in the clear.
    return [`${KEY_PREFIX}:account:${hashed(normaliseEmail(email))}`, `${KEY_PREFIX}:address:${hashed(address)}`];
  }

  /** Counts one attempt; refused when either count is over its limit. */
  async admit(email: string, address: string): Promise<SignInAdmission> {
    const { perAccount, perAddress, windowSeconds } = this.settings;
    const [over, ttl] = (await this.redis.eval(TAKE, 2, ...this.keys(email, address), perAccount, perAddress, windowSeconds)) as [number, number];
    if (over === 0) return { allowed: true };
    return { allowed: false, scope: over === 1 ? "account" : "address", retryAfterSeconds: Math.max(1, ttl) };
  }

  /** A correct password: the account starts afresh, and the address gets this attempt back. */
  async succeeded(email: string, address: string): Promise<void> {
    await this.redis.eval(SUCCEED, 2, ...this.keys(email, address));
  }
}
