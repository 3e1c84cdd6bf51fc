#!/usr/bin/env node
// `npm run typecheck`: tsc --noEmit over every TypeScript project of the repository (there is no root
// tsconfig: each project has its own settings). Exits non-zero when any project has a type error.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const PROJECTS = ["packages/contracts", "packages/dsl", "packages/db", "packages/cli", "apps/runner", "apps/web", "e2e"];

const failed = [];
for (const project of PROJECTS) {
  const started = Date.now();
  const result = spawnSync("npx", ["tsc", "--noEmit", "--pretty", "-p", project], { cwd: root, stdio: "inherit" });
  console.log(`typecheck ${project}: ${result.status === 0 ? "ok" : "FAILED"} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (result.status !== 0) failed.push(project);
}
if (failed.length > 0) console.error(`type errors in: ${failed.join(", ")}`);
process.exit(failed.length > 0 ? 1 : 0);
