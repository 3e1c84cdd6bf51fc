import path from "node:path";
import { fileURLToPath } from "node:url";

/** Where the schema and migrations live, resolved from this file (no machine-specific paths). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
export const SCHEMA_PATH = path.join(REPO_ROOT, "prisma", "schema.prisma");
export const MIGRATIONS_DIR = path.join(REPO_ROOT, "prisma", "migrations");

export interface SchemaPaths {
  /** schema.prisma, the source of truth. */
  schemaPath: string;
  /** prisma/migrations (Prisma's folder format). */
  migrationsDir: string;
}

export const DEFAULT_PATHS: SchemaPaths = { schemaPath: SCHEMA_PATH, migrationsDir: MIGRATIONS_DIR };
