import pg from "pg";

/**
 * Database-level chores the schema engine does not do for us: make sure the target database
 * exists, and create/drop throw-away ones. All of them connect to the `postgres` maintenance
 * database on the same server, with the same credentials as the given URL.
 */

export function parseDatabaseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`DATABASE_URL is not a valid URL (expected postgresql://user@host:port/database)`);
  }
  if (parsed.protocol !== "postgresql:" && parsed.protocol !== "postgres:") {
    throw new Error(`DATABASE_URL must start with postgresql:// or postgres:// (got "${parsed.protocol}//")`);
  }
  if (databaseName(parsed) === "") {
    throw new Error("DATABASE_URL names no database (expected postgresql://user@host:port/database)");
  }
  return parsed;
}

export function databaseName(url: URL): string {
  return decodeURIComponent(url.pathname.replace(/^\//, ""));
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function withMaintenanceClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(url, "postgres") });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates the database named in `url` unless it exists. Returns true when it was created.
 * Connects to the target first, so a user who may not open `postgres` still works when the
 * database is already there.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(parseDatabaseUrl(url));
  const probe = new pg.Client({ connectionString: url });
  try {
    await probe.connect();
    return false;
  } catch (error) {
    if ((error as { code?: string }).code !== "3D000") throw error; // 3D000: database does not exist
  } finally {
    await probe.end().catch(() => undefined);
  }
  return withMaintenanceClient(url, async (client) => {
    try {
      await client.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
      return true;
    } catch (error) {
      // Someone else created it between our probe and our CREATE: that is fine.
      if ((error as { code?: string }).code === "42P04") return false;
      throw error;
    }
  });
}

export async function createDatabase(url: string, name: string): Promise<void> {
  await withMaintenanceClient(url, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(name)}`));
}

/** Drops a database even if connections are still open (PostgreSQL 13+). */
export async function dropDatabase(url: string, name: string): Promise<void> {
  await withMaintenanceClient(url, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`),
  );
}
