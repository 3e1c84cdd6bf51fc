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
import { DEMO_SPEC, DEMO_SPEC_INPUT, MULTI_AGENT_DEMO_SPEC_INPUT } from "../src/demo";
import { DEBATE_TEMPLATE_INPUT, MAJORITY_VOTE_TEMPLATE_INPUT } from "../src/templates";
import { DESIGNER_TEMPLATES } from "../src/designerTemplates";
import { activationCases } from "./activationCases";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../../..");
const targets = [resolve(repo, "packages/contracts/schema"), resolve(repo, "gpu-runtime/src/troupe/schema")];

// The demo spec as written and as zod fills it: the Python tests check their defaults against it.
const fixtures = resolve(repo, "gpu-runtime/tests/fixtures");
const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";
const outputs: [string, string][] = [
  ...Object.entries(renderSchemas()).flatMap(([file, text]) => targets.map((dir) => [resolve(dir, file), text] as [string, string])),
  [resolve(fixtures, "demo.input.json"), json(DEMO_SPEC_INPUT)],
  [resolve(fixtures, "demo.filled.json"), json(DEMO_SPEC)],
  // The multi-agent relay demo: tests/test_relay_demo_learning.py checks that it learns.
  [resolve(fixtures, "multi_agent_demo.input.json"), json(MULTI_AGENT_DEMO_SPEC_INPUT)],
  // The outcome templates: tests/test_outcome_templates.py runs each for a few steps.
  [resolve(fixtures, "template.majority_vote.json"), json(MAJORITY_VOTE_TEMPLATE_INPUT)],
  [resolve(fixtures, "template.debate.json"), json(DEBATE_TEMPLATE_INPUT)],
  // The designer's templates: tests/test_designer_templates.py checks each is valid and supported, and runs the new kinds.
  [resolve(fixtures, "designer_templates.json"), json(Object.fromEntries(DESIGNER_TEMPLATES.map((t) => [t.id, t.spec])))],
  // The memory estimate's activation bytes per token: tests/test_micro_batch.py checks the runtime's port against them.
  [resolve(fixtures, "activation_bytes.json"), json(activationCases())],
];

const check = process.argv.includes("--check");
let stale = 0;
for (const [path, text] of outputs) {
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
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
process.exit(stale ? 1 : 0);
