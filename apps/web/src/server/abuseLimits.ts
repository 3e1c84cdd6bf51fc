import { z } from "zod";

/**
 * The operator's knobs against one caller wearing the web app down (issue 30): sign-in attempts,
 * password-hashing concurrency, and live streams. Part of the validated server environment
 * (`env.ts`); each has a default that a small team never notices.
 */

const count = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);

export const ABUSE_LIMITS = z.object({
  /** Sign-in attempts per account (email) per window; beyond it 429 with Retry-After. A success clears it. */
  TROUPE_SIGNIN_ACCOUNT_LIMIT: count(1, 10_000, 10),
  /** Sign-in attempts per client address per window (the nearest X-Forwarded-For entry). */
  TROUPE_SIGNIN_ADDRESS_LIMIT: count(1, 100_000, 50),
  /** The sign-in limits' window, in seconds. */
  TROUPE_SIGNIN_WINDOW_S: count(1, 86_400, 900),
  /** Password hashes (scrypt, 32 MiB and ~100 ms of a core each) computed at once in this process. */
  TROUPE_PASSWORD_HASH_CONCURRENCY: count(1, 64, 2),
  /** Hashes waiting for a slot before sign-in answers 503 "busy" instead of queueing more. */
  TROUPE_PASSWORD_HASH_QUEUE: count(0, 10_000, 32),
  /** Open live streams (SSE) per user, over all their sessions and tokens and all web processes. */
  TROUPE_LIVE_STREAMS_PER_USER: count(1, 10_000, 20),
  /** Open live streams per API token. */
  TROUPE_LIVE_STREAMS_PER_TOKEN: count(1, 10_000, 10),
  /**
   * Milliseconds between a live stream's heartbeats; at each one the caller is checked again (a
   * disabled user, a changed role, a revoked token or a signed-out session ends the stream).
   */
  TROUPE_LIVE_HEARTBEAT_MS: count(50, 300_000, 15_000),
});
export type AbuseLimits = z.infer<typeof ABUSE_LIMITS>;
