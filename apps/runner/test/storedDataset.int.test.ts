import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEMO_SPEC_INPUT, RunSpec } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { materialiseRun, runFiles } from "../src/run/materialise";
import { runJob } from "../src/run/runJob";
import { createQueuedRun, openServices, testContext, uniqueId, type TestServices } from "./helpers/services";
import { RUNTIME_PYTHON, runtimeUnavailable } from "./helpers/realRuntime";

/** A dataset uploaded to Troupe (`source.kind: "stored"`) reaches the runtime as a file it reads. */

const python = RUNTIME_PYTHON;
const unavailable = runtimeUnavailable();

let services: TestServices;
const datasetIds: string[] = [];
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.db.dataset.deleteMany({ where: { id: { in: datasetIds } } });
  await services.close();
});

// The demo's echo-letter task as an uploaded file: the builtin reward reads the `letter` column.
const LETTERS = "abcdefgh";
const JSONL = [...LETTERS].map((l) => JSON.stringify({ prompt: `say ${l}:`, letter: l })).join("\n") + "\n";

async function storeJsonl(text: string): Promise<string> {
  const bytes = Buffer.from(text);
  const row = await services.db.dataset.create({
    data: {
      name: uniqueId("letters").replace(/-/g, "_"),
      format: "jsonl",
      byteSize: bytes.byteLength,
      rowCount: text.trim().split("\n").length,
      columns: ["prompt", "letter"],
      sha256: createHash("sha256").update(bytes).digest("hex"),
      content: bytes,
    },
  });
  datasetIds.push(row.id);
  return row.id;
}

function storedSpec(datasetId: string, steps: number) {
  return RunSpec.parse({
    ...DEMO_SPEC_INPUT,
    datasets: [{ name: "letters", source: { kind: "stored", datasetId, format: "jsonl" } }],
    trainer: { ...DEMO_SPEC_INPUT.trainer, steps, promptsPerStep: 2 },
    algorithm: { name: "grpo", groupSize: 2 },
  });
}

describe("stored datasets", () => {
  it("are written into the run folder and handed to the runtime as `file` sources", async () => {
    const datasetId = await storeJsonl(JSONL);
    const files = runFiles(services.workRoot, uniqueId("run"));
    await materialiseRun(files, storedSpec(datasetId, 1), services.db);
    const written = JSON.parse(readFileSync(files.specPath, "utf8"));
    expect(written.datasets[0].source).toEqual({ kind: "file", path: "datasets/0-letters.jsonl", format: "jsonl" });
    expect(readFileSync(join(files.workDir, "datasets/0-letters.jsonl"), "utf8")).toBe(JSONL);
  });

  it("refuse a dataset that no longer exists, naming the field", async () => {
    const files = runFiles(services.workRoot, uniqueId("run"));
    await expect(materialiseRun(files, storedSpec("gone", 1), services.db)).rejects.toThrow(
      "datasets.0.source.datasetId: dataset gone is not stored in Troupe (deleted?)",
    );
  });

  const title = "train through the real runtime (2 steps on the uploaded rows)";
  it.skipIf(unavailable !== null)(unavailable ? `${title} — SKIPPED: ${unavailable}` : title, { timeout: 300_000 }, async () => {
    const { ctx } = testContext(services, { python });
    ctx.childEnv = { HF_HUB_OFFLINE: "1" };
    const runId = await createQueuedRun(services, storedSpec(await storeJsonl(JSONL), 2));
    const result = await runJob(ctx, runId);
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect({ result, error: run.error }).toEqual({ result: { kind: "finished", status: "succeeded" }, error: null });
    // The Run row keeps the spec as launched; only the runtime's copy names a file.
    expect((run.spec as { datasets: { source: { kind: string } }[] }).datasets[0]!.source.kind).toBe("stored");
    const episodes = await services.db.episode.findMany({ where: { runId }, select: { messages: true } });
    expect(episodes.length).toBeGreaterThan(0);
    expect(JSON.stringify(episodes[0]!.messages)).toMatch(/say [a-h]:/);
  });
});
