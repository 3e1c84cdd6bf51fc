export { applyMigrations, createMigration, diffDatabaseToSchema, diffMigrationsToSchema } from "./commands";
export type { ApplyResult, NewMigration } from "./commands";
export { createDatabase, dropDatabase, ensureDatabase, withDatabase } from "./database";
export { migrationChecksum, readMigrations } from "./migrationsFolder";
export { DEFAULT_PATHS, MIGRATIONS_DIR, REPO_ROOT, SCHEMA_PATH, type SchemaPaths } from "./paths";
export { schemaEngineVersion } from "./wasmEngine";
