import { runControlChannel, type RunControlMessage } from "@troupe/contracts";
import type { Redis } from "ioredis";

/**
 * Publishes a control message on this install's channel: the one named after the Redis database
 * index the web is connected to (pub/sub ignores SELECT; see `runControlChannel`). Returns how many
 * subscribers heard it. Pub/sub only wakes the runner: what it acts on is stored on the Run row.
 */
export function publishRunControl(redis: Redis, message: RunControlMessage): Promise<number> {
  return redis.publish(runControlChannel(redis.options.db ?? 0), JSON.stringify(message));
}
