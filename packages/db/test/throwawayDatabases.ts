import { randomBytes } from "node:crypto";
import { dropDatabase, withDatabase } from "../scripts/schema-engine/database";

/** Integration tests get their own databases on DATABASE_URL's server and drop them afterwards. */

export function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === "") {
    throw new Error("integration tests need DATABASE_URL pointing at a PostgreSQL server (any database on it)");
  }
  return url;
}

export class ThrowawayDatabases {
  private readonly names: string[] = [];

  /** A URL for a database that does not exist yet (`applyMigrations` creates it). */
  url(label: string): string {
    const name = `troupe_test_${label}_${randomBytes(4).toString("hex")}`;
    this.names.push(name);
    return withDatabase(serverUrl(), name);
  }

  async dropAll(): Promise<void> {
    for (const name of this.names.splice(0)) await dropDatabase(serverUrl(), name);
  }
}
