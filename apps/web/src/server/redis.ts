import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { QUEUES } from "@troupe/contracts";
import { serverEnv } from "../env";
import { createOutageLog, redisWhere, watchConnection, type OutageLog } from "./redisOutage";

export type RunQueue = Queue;

// Shared connections and the queue, cached on globalThis so dev hot reloads don't leak them.
const cache = globalThis as unknown as {
  troupeWebRedis?: Redis;
  troupeWebRunQueue?: RunQueue;
  troupeWebRewardTests?: RewardTestClient;
  troupeWebRedisOutage?: OutageLog;
};

/** One outage log for every connection of this process (so one line per outage, not per connection). */
function outageLog(): OutageLog {
  cache.troupeWebRedisOutage ??= createOutageLog(redisWhere(serverEnv().REDIS_URL));
  return cache.troupeWebRedisOutage;
}

/** A new ioredis connection. Blocking reads (SSE) need one of their own, closed with the client. */
export function createRedisConnection(options: { maxRetriesPerRequest?: number | null; enableOfflineQueue?: boolean } = {}): Redis {
  // `null` (BullMQ's requirement: wait out a Redis restart) must survive; `??` would turn it into 3.
  const maxRetriesPerRequest = options.maxRetriesPerRequest === undefined ? 3 : options.maxRetriesPerRequest;
  return watchConnection(new Redis(serverEnv().REDIS_URL, { maxRetriesPerRequest, enableOfflineQueue: options.enableOfflineQueue ?? true }), outageLog());
}

/** Shared connection for short commands (XADD, PUBLISH). */
export function getRedis(): Redis {
  cache.troupeWebRedis ??= createRedisConnection();
  return cache.troupeWebRedis;
}

/** The runs queue (QUEUES.runs) the runners consume. */
export function getRunQueue(): RunQueue {
  if (!cache.troupeWebRunQueue) {
    const queue = new Queue(QUEUES.runs.name, {
      // BullMQ wants its own connection. No offline queue (as BullMQ advises for queues used in
      // HTTP handlers): with Redis down, adding a job fails at once and the request answers 503
      // instead of hanging until Redis is back.
      connection: createRedisConnection({ maxRetriesPerRequest: null, enableOfflineQueue: false }),
    });
    // The connection's errors are already logged once per outage; the queue re-emits them.
    queue.on("error", () => undefined);
    cache.troupeWebRunQueue = queue;
  }
  return cache.troupeWebRunQueue;
}

/** The reward-test queue (QUEUES.rewardTests) and its events, on which a request waits for the result. */
export interface RewardTestClient {
  queue: Queue;
  events: QueueEvents;
}

export function getRewardTestClient(): RewardTestClient {
  if (!cache.troupeWebRewardTests) {
    const client = {
      queue: new Queue(QUEUES.rewardTests.name, { connection: createRedisConnection({ maxRetriesPerRequest: null, enableOfflineQueue: false }) }),
      // QueueEvents blocks on a stream read: it needs a connection of its own.
      events: new QueueEvents(QUEUES.rewardTests.name, { connection: createRedisConnection({ maxRetriesPerRequest: null }) }),
    };
    // Connection errors are logged once per outage by the connections themselves.
    client.queue.on("error", () => undefined);
    client.events.on("error", () => undefined);
    cache.troupeWebRewardTests = client;
  }
  return cache.troupeWebRewardTests;
}
