import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { QUEUES } from "@troupe/contracts";
import { serverEnv } from "../env";

export type RunQueue = Queue;

/** A new ioredis connection. Blocking reads (SSE) need one of their own, closed with the client. */
export function createRedisConnection(options: { maxRetriesPerRequest?: number | null } = {}): Redis {
  // `null` (BullMQ's requirement: wait out a Redis restart) must survive; `??` would turn it into 3.
  const maxRetriesPerRequest = options.maxRetriesPerRequest === undefined ? 3 : options.maxRetriesPerRequest;
  return new Redis(serverEnv().REDIS_URL, { maxRetriesPerRequest });
}

// Shared connections and the queue, cached on globalThis so dev hot reloads don't leak them.
const cache = globalThis as unknown as { troupeWebRedis?: Redis; troupeWebRunQueue?: RunQueue; troupeWebRewardTests?: RewardTestClient };

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

/** The reward-test queue (QUEUES.rewardTests) and its events, on which a request waits for the result. */
export interface RewardTestClient {
  queue: Queue;
  events: QueueEvents;
}

export function getRewardTestClient(): RewardTestClient {
  cache.troupeWebRewardTests ??= {
    queue: new Queue(QUEUES.rewardTests.name, { connection: createRedisConnection({ maxRetriesPerRequest: null }) }),
    // QueueEvents blocks on a stream read: it needs a connection of its own.
    events: new QueueEvents(QUEUES.rewardTests.name, { connection: createRedisConnection({ maxRetriesPerRequest: null }) }),
  };
  return cache.troupeWebRewardTests;
}
