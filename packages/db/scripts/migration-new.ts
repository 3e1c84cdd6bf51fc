/**
 * `npm run -w @troupe/db migration:new -- <name>`: write prisma/migrations/<timestamp>_<name>/migration.sql
 * with the SQL that takes the schema the existing migrations produce to prisma/schema.prisma.
 * Needs DATABASE_URL only for its server: the migrations are replayed on a throw-away shadow database.
 */
import path from "node:path";
import { createMigration, MIGRATIONS_DIR, REPO_ROOT } from "./schema-engine";
import { requireDatabaseUrl, runMain } from "./cliEnv";

runMain(async () => {
  const name = process.argv.slice(2).join(" ").trim();
  if (name === "") throw new Error("usage: npm run -w @troupe/db migration:new -- <name>   (e.g. add_run_tags)");
  const created = await createMigration(requireDatabaseUrl(), name);
  if (created === null) {
    console.log("No changes: prisma/schema.prisma matches what prisma/migrations produces. Nothing written.");
    return;
  }
  const file = path.relative(REPO_ROOT, path.join(MIGRATIONS_DIR, created.folder, "migration.sql"));
  console.log(`Wrote ${file}:\n\n${created.sql}`);
  console.log("Review it, then apply with: npm run -w @troupe/db migrate");
});
