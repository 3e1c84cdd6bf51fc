import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { SchemaFilter } from "@prisma/schema-engine-wasm/schema_engine_bg";
import { databaseName, ensureDatabase, parseDatabaseUrl, withDatabase } from "./database";
import { LOCKFILE_CONTENT, LOCKFILE_NAME, migrationList, readMigrations, writeMigration } from "./migrationsFolder";
import { DEFAULT_PATHS, type SchemaPaths } from "./paths";
import { MigrationAdapterFactory } from "./pgAdapterFactory";
import { createSchemaEngine, guardAgainstPanic, schemaEngineCrashed, type SchemaEngine } from "./wasmEngine";

/** The operations behind `migrate`, `migration:new` and the drift test. */

const NO_FILTERS: SchemaFilter = { externalTables: [], externalEnums: [] };

/** Runs `work` with an engine connected to `databaseUrl`; always frees the engine and its pools. */
async function withEngine<T>(
  databaseUrl: string,
  schemaPath: string,
  work: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const factory = new MigrationAdapterFactory(databaseUrl);
  let engine: SchemaEngine | undefined;
  try {
    const schemaText = readFileSync(schemaPath, "utf8");
    const created = await guardAgainstPanic(() =>
      createSchemaEngine({ schemaPath, schemaText, adapterFactory: factory }),
    );
    engine = created;
    return await guardAgainstPanic(() => work(created));
  } finally {
    if (!schemaEngineCrashed()) engine?.free();
    await factory.close();
  }
}

/** Engine errors carry the useful text in `message`; keep it, drop the wasm stack. */
function engineError(context: string, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`${context}: ${message.trim()}`, { cause: error });
}

export interface ApplyResult {
  database: string;
  /** The database did not exist and was created. */
  createdDatabase: boolean;
  /** Migrations applied by this call, in order (empty when up to date). */
  applied: string[];
  /** All migrations in the folder. */
  total: number;
}

/**
 * Applies pending migrations to `databaseUrl` (creating the database if needed) and records
 * them in Prisma's `_prisma_migrations`, so `prisma migrate deploy` elsewhere agrees.
 * Refuses, before touching anything, when an applied migration was edited or had failed.
 */
export async function applyMigrations(
  databaseUrl: string,
  paths: SchemaPaths = DEFAULT_PATHS,
): Promise<ApplyResult> {
  const database = databaseName(parseDatabaseUrl(databaseUrl));
  const migrations = readMigrations(paths.migrationsDir);
  if (migrations.length === 0) {
    throw new Error(`no migrations in ${paths.migrationsDir}; create one with: npm run -w @troupe/db migration:new -- init`);
  }
  const createdDatabase = await ensureDatabase(databaseUrl);
  const migrationsList = migrationList(paths.migrationsDir);
  return withEngine(databaseUrl, paths.schemaPath, async (engine) => {
    const history = await engine
      .diagnoseMigrationHistory({ migrationsList, optInToShadowDatabase: false, filters: NO_FILTERS })
      .catch((error: unknown) => {
        throw engineError(`could not read the migration history of ${database}`, error);
      });
    if (history.failedMigrationNames.length > 0) {
      const names = history.failedMigrationNames.join(", ");
      throw new Error(
        `refusing to migrate ${database}: migration ${names} failed earlier and may be half applied. ` +
          `Repair the database by hand, then mark it rolled back ` +
          `(UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = '<name>' AND finished_at IS NULL), ` +
          `or, in development, drop the database and migrate again.`,
      );
    }
    if (history.editedMigrationNames.length > 0) {
      const names = history.editedMigrationNames.join(", ");
      throw new Error(
        `refusing to migrate ${database}: migration ${names} was edited after it was applied ` +
          `(the sha256 of its migration.sql differs from the checksum in _prisma_migrations). ` +
          `Restore the applied file and put the change in a new migration: npm run -w @troupe/db migration:new -- <name>`,
      );
    }
    const output = await engine.applyMigrations({ migrationsList, filters: NO_FILTERS }).catch((error: unknown) => {
      throw engineError(`migrating ${database} failed`, error);
    });
    return { database, createdDatabase, applied: output.appliedMigrationNames, total: migrations.length };
  });
}

/**
 * SQL that would take the schema produced by replaying `migrationsDir` (on a throw-away shadow
 * database on `databaseUrl`'s server) to `schemaPath`; null when they match.
 */
export async function diffMigrationsToSchema(
  databaseUrl: string,
  paths: SchemaPaths = DEFAULT_PATHS,
  lockfileOverride?: string,
): Promise<string | null> {
  // The engine only probes its main connection here; `postgres` always exists, so this needs
  // no development database (the shadow database is created next to it and dropped).
  const serverUrl = withDatabase(databaseUrl, "postgres");
  const schemaText = readFileSync(paths.schemaPath, "utf8");
  return withEngine(serverUrl, paths.schemaPath, async (engine) => {
    const result = await engine
      .diff({
        from: { tag: "migrations", ...migrationList(paths.migrationsDir, lockfileOverride) },
        to: { tag: "schemaDatamodel", files: [{ path: paths.schemaPath, content: schemaText }] },
        script: true,
        exitCode: true,
        filters: NO_FILTERS,
      })
      .catch((error: unknown) => {
        throw engineError(`replaying ${paths.migrationsDir} on a shadow database failed`, error);
      });
    return result.exitCode === 2 ? (result.stdout ?? "") : null;
  });
}

/**
 * SQL that would take the live database at `databaseUrl` to `schemaPath`; null when it already
 * matches. Prisma's own bookkeeping table is not part of the comparison.
 */
export async function diffDatabaseToSchema(
  databaseUrl: string,
  schemaPath: string = DEFAULT_PATHS.schemaPath,
): Promise<string | null> {
  const database = databaseName(parseDatabaseUrl(databaseUrl));
  const schemaText = readFileSync(schemaPath, "utf8");
  return withEngine(databaseUrl, schemaPath, async (engine) => {
    const result = await engine
      .diff({
        // schemaDatasource = "the database this engine is connected to" (the adapter's connection).
        from: { tag: "schemaDatasource", files: [{ path: schemaPath, content: schemaText }], configDir: path.dirname(schemaPath) },
        to: { tag: "schemaDatamodel", files: [{ path: schemaPath, content: schemaText }] },
        script: true,
        exitCode: true,
        filters: NO_FILTERS,
      })
      .catch((error: unknown) => {
        throw engineError(`comparing ${database} with ${schemaPath} failed`, error);
      });
    return result.exitCode === 2 ? (result.stdout ?? "") : null;
  });
}

export interface NewMigration {
  folder: string;
  sql: string;
}

/** Writes a migration folder for whatever schema.prisma has that the migrations do not; null when nothing changed. */
export async function createMigration(
  databaseUrl: string,
  name: string,
  paths: SchemaPaths = DEFAULT_PATHS,
): Promise<NewMigration | null> {
  // Before the first migration there is no lockfile yet; describe the folder as it will be.
  const hasLockfile = existsSync(path.join(paths.migrationsDir, LOCKFILE_NAME));
  const sql = await diffMigrationsToSchema(databaseUrl, paths, hasLockfile ? undefined : LOCKFILE_CONTENT);
  if (sql === null) return null;
  const folder = writeMigration(paths.migrationsDir, name, sql);
  return { folder, sql };
}
