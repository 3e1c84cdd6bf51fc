/**
 * `npm run -w @troupe/db generate`: `prisma generate`, offline.
 *
 * Every prisma CLI command first makes sure a native schema-engine binary is present and
 * downloads it when not, which fails without network. `generate` never runs that binary, so we
 * point PRISMA_SCHEMA_ENGINE_BINARY at a stand-in that fails loudly if anything ever does run it
 * (migrations go through scripts/migrate.ts instead).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

const standInDir = mkdtempSync(path.join(os.tmpdir(), "troupe-prisma-generate-"));
const standIn = path.join(standInDir, "schema-engine");
writeFileSync(
  standIn,
  '#!/bin/sh\necho "The native Prisma schema engine is not available offline; use npm run -w @troupe/db migrate" >&2\nexit 1\n',
);
chmodSync(standIn, 0o755);

const prismaCli = path.join(path.dirname(require.resolve("prisma/package.json")), "build", "index.js");
const result = spawnSync(process.execPath, [prismaCli, "generate", "--config", path.join(packageDir, "prisma.config.ts")], {
  cwd: packageDir,
  stdio: "inherit",
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: standIn,
    // No update check or telemetry calls (they would only time out here).
    CHECKPOINT_DISABLE: "1",
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
  },
});
rmSync(standInDir, { recursive: true, force: true });
if (result.error) throw result.error;
process.exit(result.status ?? 1);
