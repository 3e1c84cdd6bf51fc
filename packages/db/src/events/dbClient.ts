import type { PrismaClient } from "../generated/prisma/client";

/**
 * The Prisma client the event store works with. It is the generated client type, whatever
 * adapter `createDb` gives it, so both the runner and the web can pass theirs.
 */
export type EventStoreDb = PrismaClient;
