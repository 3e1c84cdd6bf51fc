/**
 * Writes gpu-runtime/tests/fixtures/memory_estimates.json: the cases of memoryCases.ts with the
 * contracts' estimate per phase, which gpu-runtime/tests/test_memory_estimate.py compares with what the
 * runtime measures. `--check` compares instead and exits 1 when the file is stale.
 * Run: npm run -w @troupe/contracts export-memory-estimates
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { caseEstimates } from "./memoryCases";

export const MEMORY_ESTIMATES_FILE = resolve(dirname(fileURLToPath(import.meta.url)), "../../../gpu-runtime/tests/fixtures/memory_estimates.json");

export function renderMemoryEstimates(): string {
  return JSON.stringify(caseEstimates(), null, 1) + "\n";
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = renderMemoryEstimates();
  if (process.argv.includes("--check")) {
    const current = (() => {
      try {
        return readFileSync(MEMORY_ESTIMATES_FILE, "utf8");
      } catch {
        return "";
      }
    })();
    if (current !== text) {
      console.error(`${MEMORY_ESTIMATES_FILE} is stale: run npm run -w @troupe/contracts export-memory-estimates`);
      process.exit(1);
    }
  } else {
    writeFileSync(MEMORY_ESTIMATES_FILE, text);
    console.log(`wrote ${MEMORY_ESTIMATES_FILE}`);
  }
}
