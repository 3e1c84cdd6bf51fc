import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "prisma/config";

// Read by the prisma CLI (`generate`; `migrate deploy` on a machine that can download the native
// engine). Offline, migrations go through scripts/migrate.ts, which reads the same folder.
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export default defineConfig({
  schema: path.join(repoRoot, "prisma", "schema.prisma"),
  migrations: { path: path.join(repoRoot, "prisma", "migrations") },
  // `generate` needs no database; commands that do fail with Prisma's own "url is empty" message.
  datasource: { url: process.env.DATABASE_URL ?? "" },
});
