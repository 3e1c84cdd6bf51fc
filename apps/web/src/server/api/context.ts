import { getDb } from "../db";
import { getRedis, getRunQueue } from "../redis";
import type { TRPCContext } from "./trpc";

/** The context of a request served by this process: the process-wide singletons. */
export function createRequestContext(): TRPCContext {
  return { db: getDb(), redis: getRedis(), runQueue: getRunQueue() };
}
