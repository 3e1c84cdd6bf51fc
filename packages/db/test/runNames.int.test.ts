import { cpSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyMigrations, MIGRATIONS_DIR, readMigrations, SCHEMA_PATH } from "../scripts/schema-engine";
import { ScratchDirs } from "./scratchDirs";
import { query } from "./sqlQuery";
import { ThrowawayDatabases } from "./throwawayDatabases";

/** Migration `run_display_names` gives the runs already stored a readable name each, all different. */

const MIGRATION = "20261127133000_run_display_names";
const databases = new ThrowawayDatabases();
const scratch = new ScratchDirs();
afterAll(async () => {
  scratch.removeAll();
  await databases.dropAll();
});

describe(`migration ${MIGRATION}`, () => {
  it("names every existing run (adjective-noun-number, no two alike) and every later insert", async () => {
    const url = databases.url("run_names");
    // The migrations before this one, then runs as they were stored before it.
    const dir = scratch.make("troupe-db-run-names-");
    cpSync(MIGRATIONS_DIR, path.join(dir, "migrations"), { recursive: true });
    cpSync(SCHEMA_PATH, path.join(dir, "schema.prisma"));
    const later = readMigrations(MIGRATIONS_DIR).map((m) => m.name).filter((name) => name >= MIGRATION);
    expect(later[0]).toBe(MIGRATION);
    for (const name of later) rmSync(path.join(dir, "migrations", name), { recursive: true });
    await applyMigrations(url, { schemaPath: path.join(dir, "schema.prisma"), migrationsDir: path.join(dir, "migrations") });
    await query(
      url,
      `INSERT INTO "Run" (id, name, spec, "specVersion", seed, status)
       SELECT 'old-' || i, 'the demo', '{}'::json, 1, 0, 'succeeded' FROM generate_series(1, 300) i`,
    );

    await applyMigrations(url);
    const named = await query<{ displayName: string | null }>(url, `SELECT "displayName" FROM "Run"`);
    expect(named).toHaveLength(300);
    for (const r of named) expect(r.displayName).toMatch(/^[a-z]+-[a-z]+-\d+$/);
    expect(new Set(named.map((r) => r.displayName)).size).toBe(300);

    await query(url, `INSERT INTO "Run" (id, name, spec, "specVersion", seed) VALUES ('new-1', 'the demo', '{}'::json, 1, 0)`);
    const [fresh] = await query<{ displayName: string }>(url, `SELECT "displayName" FROM "Run" WHERE id = 'new-1'`);
    expect(fresh!.displayName).toMatch(/^[a-z]+-[a-z]+-\d+$/);
    expect(named.map((r) => r.displayName)).not.toContain(fresh!.displayName);
  });
});
