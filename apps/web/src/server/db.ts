import { createDb, type Db } from "@troupe/db";
import { serverEnv } from "../env";

export type { Db };

// One Prisma client per process; cached on globalThis so dev hot reloads don't open new pools.
const cache = globalThis as unknown as { troupeWebDb?: Db };

export function getDb(): Db {
  cache.troupeWebDb ??= createDb(serverEnv().DATABASE_URL);
  return cache.troupeWebDb;
}
