import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  applyMigrations,
  createMigration,
  diffDatabaseToSchema,
  diffMigrationsToSchema,
  DEFAULT_PATHS,
  MIGRATIONS_DIR,
  migrationChecksum,
  readMigrations,
  REPO_ROOT,
  SCHEMA_PATH,
  type SchemaPaths,
  withDatabase,
} from "../scripts/schema-engine";
import { ScratchDirs } from "./scratchDirs";
import { query } from "./sqlQuery";
import { serverUrl, ThrowawayDatabases } from "./throwawayDatabases";

const databases = new ThrowawayDatabases();
const scratch = new ScratchDirs();
afterAll(async () => {
  scratch.removeAll();
  await databases.dropAll();
});

/** A scratch copy of prisma/ (schema + migrations) that a test may change. */
function scratchCopy(): SchemaPaths {
  const dir = scratch.make("troupe-db-test-prisma-");
  cpSync(MIGRATIONS_DIR, path.join(dir, "migrations"), { recursive: true });
  cpSync(SCHEMA_PATH, path.join(dir, "schema.prisma"));
  return { schemaPath: path.join(dir, "schema.prisma"), migrationsDir: path.join(dir, "migrations") };
}

function addMigration(paths: SchemaPaths, folder: string, sql: string): void {
  mkdirSync(path.join(paths.migrationsDir, folder));
  writeFileSync(path.join(paths.migrationsDir, folder, "migration.sql"), sql);
}

async function shadowDatabases(): Promise<string[]> {
  const rows = await query<{ datname: string }>(
    withDatabase(serverUrl(), "postgres"),
    "SELECT datname FROM pg_database WHERE datname LIKE 'troupe_shadow_%'",
  );
  return rows.map((row) => row.datname);
}

interface MigrationRow {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
}

describe("migrations replay to exactly schema.prisma", () => {
  const url = databases.url("replay");
  const onDisk = readMigrations(MIGRATIONS_DIR);

  it("applies every migration to a database it creates", async () => {
    const result = await applyMigrations(url);
    expect(result.createdDatabase).toBe(true);
    expect(result.applied).toEqual(onDisk.map((m) => m.name));
  });

  it("leaves no difference between the migrated database and schema.prisma", async () => {
    const missing = await diffDatabaseToSchema(url);
    expect(missing, `prisma/migrations do not produce schema.prisma. Missing SQL (create a migration with \`npm run -w @troupe/db migration:new -- <name>\`):\n${missing}`).toBeNull();
  });

  it("agrees when replayed on a shadow database (what migration:new diffs), and drops the shadow", async () => {
    const before = await shadowDatabases();
    const missing = await diffMigrationsToSchema(serverUrl());
    expect(missing, `schema.prisma has changes no migration holds:\n${missing}`).toBeNull();
    expect(await shadowDatabases()).toEqual(before);
  });

  it("records Prisma's own _prisma_migrations rows (sha256 checksums, finished)", async () => {
    const rows = await query<MigrationRow>(url, 'SELECT * FROM "_prisma_migrations" ORDER BY started_at');
    expect(rows.map((r) => r.migration_name)).toEqual(onDisk.map((m) => m.name));
    for (const [i, row] of rows.entries()) {
      expect(row.checksum).toBe(migrationChecksum(readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, "migration.sql"), "utf8")));
      expect(row.checksum).toBe(onDisk[i]?.checksum);
      expect(row.finished_at).not.toBeNull();
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("applying again is a no-op", async () => {
    const before = await query<MigrationRow>(url, 'SELECT * FROM "_prisma_migrations" ORDER BY id');
    const result = await applyMigrations(url);
    expect(result).toMatchObject({ createdDatabase: false, applied: [] });
    expect(await query<MigrationRow>(url, 'SELECT * FROM "_prisma_migrations" ORDER BY id')).toEqual(before);
  });

  it("refuses an applied migration that was edited, naming it, and changes nothing", async () => {
    const paths = scratchCopy();
    const last = onDisk.at(-1)!;
    const file = path.join(paths.migrationsDir, last.name, "migration.sql");
    writeFileSync(file, `${readFileSync(file, "utf8")}\nCREATE TABLE "Sneaky" ("id" INTEGER);\n`);
    addMigration(paths, "29991231235959_later", 'CREATE TABLE "Later" ("id" INTEGER);\n');
    await expect(applyMigrations(url, paths)).rejects.toThrow(
      new RegExp(`refusing to migrate .*: migration ${last.name} was edited after it was applied`),
    );
    const tables = await query<{ table_name: string }>(
      url,
      "SELECT table_name FROM information_schema.tables WHERE table_name IN ('Sneaky', 'Later')",
    );
    expect(tables).toEqual([]);
  });

  it("detects drift: a schema change without a migration shows up as the missing SQL", async () => {
    const paths = scratchCopy();
    const schema = readFileSync(paths.schemaPath, "utf8");
    writeFileSync(paths.schemaPath, schema.replace(/(model Experiment \{\n)/, '$1  note String?\n'));
    const missing = await diffDatabaseToSchema(url, paths.schemaPath);
    expect(missing).toMatch(/ALTER TABLE "Experiment" ADD COLUMN\s+"note" TEXT/);
  });
});

describe("failed and unusual migrations", () => {
  it("applies a failing migration atomically, records the failure and then refuses", async () => {
    const url = databases.url("failed");
    const paths = scratchCopy();
    addMigration(paths, "29991231235959_broken", 'CREATE TABLE "HalfDone" ("id" INTEGER);\nSELECT * FROM "no_such_table";\n');
    await expect(applyMigrations(url, paths)).rejects.toThrow(/migrating troupe_test_failed_\w+ failed: .*no_such_table/s);
    // The whole script is one implicit transaction, like Prisma's native engine: nothing half applied.
    expect(await query(url, "SELECT 1 FROM information_schema.tables WHERE table_name = 'HalfDone'")).toEqual([]);
    const rows = await query<MigrationRow>(url, `SELECT * FROM "_prisma_migrations" WHERE migration_name = '29991231235959_broken'`);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.finished_at).toBeNull();
    await expect(applyMigrations(url, paths)).rejects.toThrow(/migration 29991231235959_broken failed earlier/);
  });

  it("runs a migration with a $$ function body containing semicolons, and still diffs cleanly", async () => {
    const url = databases.url("dollar");
    const paths = scratchCopy();
    addMigration(
      paths,
      "29991231235959_function",
      `CREATE FUNCTION troupe_twice(x INTEGER) RETURNS INTEGER AS $$\nDECLARE y INTEGER;\nBEGIN\n  y := x * 2;\n  RETURN y;\nEND;\n$$ LANGUAGE plpgsql;\n`,
    );
    const result = await applyMigrations(url, paths);
    expect(result.applied.at(-1)).toBe("29991231235959_function");
    expect(await query(url, "SELECT troupe_twice(21) AS v")).toEqual([{ v: 42 }]);
    // A CHECK constraint makes introspection return rows with a "char" column (pg_constraint.contype),
    // which adapter-pg cannot map by itself. Prisma does not manage functions or checks: no drift.
    await query(url, `ALTER TABLE "Experiment" ADD CONSTRAINT "Experiment_name_not_empty" CHECK ("name" <> '')`);
    expect(await diffDatabaseToSchema(url)).toBeNull();
  });
});

describe("migration:new", () => {
  it("writes a migration for a schema change, and says nothing changed once it exists", async () => {
    const paths = scratchCopy();
    const schema = readFileSync(paths.schemaPath, "utf8");
    writeFileSync(paths.schemaPath, schema.replace(/(model Experiment \{\n)/, '$1  note String?\n'));
    const created = await createMigration(serverUrl(), "Add experiment note", paths);
    expect(created?.folder).toMatch(/^\d{14}_add_experiment_note$/);
    expect(created?.sql).toMatch(/ALTER TABLE "Experiment" ADD COLUMN\s+"note" TEXT/);
    const names = readMigrations(paths.migrationsDir).map((m) => m.name);
    expect(names.at(-1)).toBe(created?.folder);
    expect(readFileSync(path.join(paths.migrationsDir, created!.folder, "migration.sql"), "utf8")).toBe(created?.sql);
    expect(await createMigration(serverUrl(), "again", paths)).toBeNull();
  });

  it("starts a fresh folder with the lockfile", async () => {
    const paths = scratchCopy();
    const empty = scratch.make("troupe-db-test-migrations-");
    const created = await createMigration(serverUrl(), "init", { ...paths, migrationsDir: empty });
    expect(created?.sql).toMatch(/CREATE TABLE "Experiment"/);
    expect(readFileSync(path.join(empty, "migration_lock.toml"), "utf8")).toMatch(/provider = "postgresql"/);
    // A fresh folder's first migration creates every model of the schema in one go.
    const models = [...readFileSync(DEFAULT_PATHS.schemaPath, "utf8").matchAll(/^model (\w+) \{/gm)].map((m) => m[1]);
    expect(models.length).toBeGreaterThan(5);
    for (const model of models) expect(created?.sql).toContain(`CREATE TABLE "${model}"`);
  });
});

describe("the npm scripts", () => {
  const exec = promisify(execFile);
  const tsx = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
  const script = (name: string) => path.join(REPO_ROOT, "packages", "db", "scripts", name);

  it("migrate creates, migrates, and then reports up to date", async () => {
    const url = databases.url("cli");
    const env = { ...process.env, DATABASE_URL: url };
    const first = await exec(tsx, [script("migrate.ts")], { env });
    expect(first.stdout).toMatch(
      new RegExp(`Created database troupe_test_cli_\\w+\\.\\nApplied ${readMigrations(MIGRATIONS_DIR).length} migrations?`),
    );
    const second = await exec(tsx, [script("migrate.ts")], { env });
    expect(second.stdout).toMatch(/is up to date/);
    expect(await diffDatabaseToSchema(url, DEFAULT_PATHS.schemaPath)).toBeNull();
  });

  it("migrate exits 1 naming DATABASE_URL when it is missing", async () => {
    const env = { ...process.env, DATABASE_URL: "" };
    await expect(exec(tsx, [script("migrate.ts")], { env })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/DATABASE_URL is not set/),
    });
  });

  it("migration:new says no changes for the committed schema", async () => {
    const { stdout } = await exec(tsx, [script("migration-new.ts"), "nothing"], { env: process.env });
    expect(stdout).toMatch(/No changes/);
  });
});
