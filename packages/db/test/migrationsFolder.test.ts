import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  LOCKFILE_NAME,
  migrationChecksum,
  migrationList,
  nextMigrationTimestamp,
  readMigrations,
  slugifyMigrationName,
  writeMigration,
} from "../scripts/schema-engine/migrationsFolder";
import { MIGRATIONS_DIR } from "../scripts/schema-engine/paths";
import { ScratchDirs } from "./scratchDirs";

const scratch = new ScratchDirs();
afterAll(() => scratch.removeAll());

describe("migrations folder", () => {
  it("checksums migration.sql the way Prisma does (lowercase hex sha256)", () => {
    expect(migrationChecksum("CREATE TABLE x ();\n")).toBe(
      createHash("sha256").update("CREATE TABLE x ();\n").digest("hex"),
    );
    expect(migrationChecksum("a")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("reads the committed migrations in timestamp order, with a lockfile for postgresql", () => {
    const migrations = readMigrations(MIGRATIONS_DIR);
    expect(migrations.length).toBeGreaterThan(0);
    const names = migrations.map((m) => m.name);
    expect(names).toEqual([...names].sort());
    for (const name of names) expect(name).toMatch(/^\d{14}_[a-z0-9_]+$/);
    expect(readFileSync(path.join(MIGRATIONS_DIR, LOCKFILE_NAME), "utf8")).toMatch(/provider = "postgresql"/);
  });

  it("describes the folder to the engine with each file's content", () => {
    const list = migrationList(MIGRATIONS_DIR);
    expect(list.lockfile.content).toMatch(/postgresql/);
    expect(list.migrationDirectories[0]?.migrationFile.content).toEqual({
      tag: "ok",
      value: readMigrations(MIGRATIONS_DIR)[0]?.sql,
    });
  });

  it("rejects a folder that is not <timestamp>_<name>", () => {
    const dir = scratch.make("troupe-db-test-migrations-");
    mkdirSync(path.join(dir, "init"));
    writeFileSync(path.join(dir, "init", "migration.sql"), "");
    expect(() => readMigrations(dir)).toThrow(/init: migration folders are named <YYYYMMDDHHMMSS>_<name>/);
  });

  it("slugifies names and refuses empty ones", () => {
    expect(slugifyMigrationName("Add run tags!")).toBe("add_run_tags");
    expect(slugifyMigrationName("  init ")).toBe("init");
    expect(() => slugifyMigrationName("!!!")).toThrow(/no letters or digits/);
  });

  it("stamps a new migration after every existing one, even when the clock is behind", () => {
    const now = new Date(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(nextMigrationTimestamp([], now)).toBe("20250102030405");
    expect(nextMigrationTimestamp(["20240101000000_init"], now)).toBe("20250102030405");
    expect(nextMigrationTimestamp(["20250102030405_a"], now)).toBe("20250102030406");
    expect(nextMigrationTimestamp(["20261231235959_future"], now)).toBe("20270101000000");
  });

  it("writes <timestamp>_<slug>/migration.sql and the lockfile", () => {
    const dir = scratch.make("troupe-db-test-migrations-");
    const folder = writeMigration(dir, "Add notes", "SELECT 1;\n", new Date(Date.UTC(2025, 0, 2, 3, 4, 5)));
    expect(folder).toBe("20250102030405_add_notes");
    expect(readFileSync(path.join(dir, folder, "migration.sql"), "utf8")).toBe("SELECT 1;\n");
    expect(readFileSync(path.join(dir, LOCKFILE_NAME), "utf8")).toMatch(/provider = "postgresql"/);
    expect(readMigrations(dir).map((m) => m.name)).toEqual([folder]);
  });
});
