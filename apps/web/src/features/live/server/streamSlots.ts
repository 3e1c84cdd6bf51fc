import type { Redis } from "ioredis";

/**
 * How many live streams a user and an API token hold open, across every web process: one sorted
 * set per user and per token in Redis, a member per open stream scored with its lease's end. An
 * open stream renews its lease at every heartbeat; a process that dies without closing its
 * streams leaves leases that simply run out, so the count never leaks.
 */

export interface StreamSlotLimits {
  perUser: number;
  perToken: number;
  /** How long a lease lasts without a renewal (a few heartbeats). */
  leaseMs: number;
}

export type SlotAdmission = { allowed: true } | { allowed: false; scope: "user" | "token"; limit: number };

const PREFIX = "troupe:live";

// KEYS: user set, token set (or the user set again when there is no token). ARGV: now, lease end,
// stream id, user cap, token cap, has token, lease ms.
const ACQUIRE = `
local now = tonumber(ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
if redis.call("ZCARD", KEYS[1]) >= tonumber(ARGV[4]) then return 1 end
if ARGV[6] == "1" then
  redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
  if redis.call("ZCARD", KEYS[2]) >= tonumber(ARGV[5]) then return 2 end
  redis.call("ZADD", KEYS[2], ARGV[2], ARGV[3])
  redis.call("PEXPIRE", KEYS[2], ARGV[7])
end
redis.call("ZADD", KEYS[1], ARGV[2], ARGV[3])
redis.call("PEXPIRE", KEYS[1], ARGV[7])
return 0
`;

// Only a lease that is still held is renewed (XX): one that ran out stays out.
const RENEW = `
for i = 1, #KEYS do
  redis.call("ZADD", KEYS[i], "XX", ARGV[1], ARGV[2])
  redis.call("PEXPIRE", KEYS[i], ARGV[3])
end
return 0
`;

export class StreamSlots {
  constructor(
    private readonly redis: Redis,
    private readonly limits: StreamSlotLimits,
  ) {}

  private keys(owner: { userId: string; tokenId?: string }): string[] {
    return [`${PREFIX}:user:${owner.userId}`, ...(owner.tokenId ? [`${PREFIX}:token:${owner.tokenId}`] : [])];
  }

  /** Takes a slot for `streamId`, or says which cap is full. */
  async acquire(owner: { userId: string; tokenId?: string }, streamId: string): Promise<SlotAdmission> {
    const [userKey, tokenKey] = this.keys(owner);
    const now = Date.now();
    const { perUser, perToken, leaseMs } = this.limits;
    const result = Number(
      await this.redis.eval(ACQUIRE, 2, userKey!, tokenKey ?? userKey!, now, now + leaseMs, streamId, perUser, perToken, tokenKey ? "1" : "0", leaseMs),
    );
    if (result === 0) return { allowed: true };
    return result === 1 ? { allowed: false, scope: "user", limit: perUser } : { allowed: false, scope: "token", limit: perToken };
  }

  /** Extends the lease (at each heartbeat). */
  async renew(owner: { userId: string; tokenId?: string }, streamId: string): Promise<void> {
    const keys = this.keys(owner);
    await this.redis.eval(RENEW, keys.length, ...keys, Date.now() + this.limits.leaseMs, streamId, this.limits.leaseMs);
  }

  async release(owner: { userId: string; tokenId?: string }, streamId: string): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const key of this.keys(owner)) pipeline.zrem(key, streamId);
    await pipeline.exec();
  }
}
