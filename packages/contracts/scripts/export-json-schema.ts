/**
 * Writes the JSON Schema of the contracts (generated from the zod schemas; never edit by hand).
 * `--check` compares instead of writing and exits 1 on drift, naming the stale file.
 * The runtime's copy (gpu-runtime/src/troupe/schema) is written from the same source so the
 * Python package stays self-contained when pip-installed.
 */
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { renderSchemas } from "../src/jsonSchema";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../../..");
const targets = [resolve(repo, "packages/contracts/schema"), resolve(repo, "gpu-runtime/src/troupe/schema")];

const check = process.argv.includes("--check");
let stale = 0;
for (const [file, text] of Object.entries(renderSchemas())) {
  for (const dir of targets) {
    const path = resolve(dir, file);
    if (check) {
      let current = "";
      try {
        current = readFileSync(path, "utf8");
      } catch {}
      if (current !== text) {
        console.error(`stale: ${path} (run: npm run contracts:export)`);
        stale++;
      }
    } else {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path, text);
      console.log(`wrote ${path}`);
    }
  }
}
process.exit(stale ? 1 : 0);
