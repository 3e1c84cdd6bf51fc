/**
 * `npm run -w @troupe/db migrate`: apply pending migrations from prisma/migrations to DATABASE_URL,
 * offline, through Prisma's wasm schema engine (see schema-engine/).
 */
import { applyMigrations } from "./schema-engine";
import { requireDatabaseUrl, runMain } from "./cliEnv";

runMain(async () => {
  const result = await applyMigrations(requireDatabaseUrl());
  if (result.createdDatabase) console.log(`Created database ${result.database}.`);
  if (result.applied.length === 0) {
    console.log(`${result.database} is up to date (${result.total} migration${result.total === 1 ? "" : "s"}, none pending).`);
  } else {
    console.log(`Applied ${result.applied.length} migration${result.applied.length === 1 ? "" : "s"} to ${result.database}:`);
    for (const name of result.applied) console.log(`  ${name}`);
  }
});
