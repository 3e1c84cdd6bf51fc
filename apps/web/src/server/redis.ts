import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { QUEUES } from "@troupe/contracts";
import { serverEnv } from "../env";

export type RunQueue = Queue;

/** A new ioredis connection. Blocking reads (SSE) need one of their own, closed with the client. */
export function createRedisConnection(options: { maxRetriesPerRequest?: number | null } = {}): Redis {
  return new Redis(serverEnv().REDIS_URL, { maxRetriesPerRequest: options.maxRetriesPerRequest ?? 3 });
}

// Shared connections and the queue, cached on globalThis so dev hot reloads don't leak them.
const cache = globalThis as unknown as { troupeWebRedis?: Redis; troupeWebRunQueue?: RunQueue };

/** Shared connection for short commands (XADD, PUBLISH). */
export function getRedis(): Redis {
  cache.troupeWebRedis ??= createRedisConnection();
  return cache.troupeWebRedis;
}

/** The runs queue (QUEUES.runs) the runners consume. */
export function getRunQueue(): RunQueue {
  cache.troupeWebRunQueue ??= new Queue(QUEUES.runs.name, {
    // BullMQ wants its own connection; null retries so its commands wait out a Redis restart.
    connection: createRedisConnection({ maxRetriesPerRequest: null }),
  });
  return cache.troupeWebRunQueue;
}
