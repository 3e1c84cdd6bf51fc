import type { Db } from "../client";

/**
 * The Prisma client the event store works with: the one `createDb` gives (specs ordered on read),
 * so both the runner and the web can pass theirs.
 */
export type EventStoreDb = Db;
