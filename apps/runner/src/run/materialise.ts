import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Db } from "@troupe/db";

/** Run ids are cuids; anything else is refused before it can become a path. */
export const SAFE_RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

export interface RunFiles {
  workDir: string;
  specPath: string;
}

export function runFiles(workRoot: string, runId: string): RunFiles {
  if (!SAFE_RUN_ID.test(runId)) throw new Error(`run id ${JSON.stringify(runId)} is not a safe folder name`);
  const workDir = resolve(workRoot, runId);
  return { workDir, specPath: join(workDir, "spec.json") };
}

/** Where a stored dataset is written, relative to the run's work folder. */
export const DATASETS_DIR = "datasets";

type Json = Record<string, unknown>;

/** Dataset names are RunSpec identifiers (letters, digits, _ . -), but never trust them as a path. */
function datasetFileName(index: number, name: string, format: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^\.+/, "_");
  return `${index}-${safe}.${format}`;
}

/**
 * Writes every `stored` dataset of the spec (a Troupe upload) into `<work dir>/datasets/` and returns
 * the spec with those sources rewritten to `{kind: "file", path, format}`: the runtime only reads
 * files, and knows nothing of our database. The stored content is checked against its sha256.
 */
export async function materialiseStoredDatasets(db: Db, workDir: string, spec: unknown): Promise<unknown> {
  const doc = spec as Json;
  const datasets = Array.isArray(doc?.datasets) ? (doc.datasets as Json[]) : [];
  if (!datasets.some((d) => (d.source as Json | undefined)?.kind === "stored")) return spec;
  await mkdir(join(workDir, DATASETS_DIR), { recursive: true });
  const rewritten = await Promise.all(
    datasets.map(async (dataset, i) => {
      const source = dataset.source as Json;
      if (source?.kind !== "stored") return dataset;
      const id = String(source.datasetId);
      const row = await db.dataset.findUnique({ where: { id }, select: { content: true, sha256: true, format: true } });
      if (!row?.content) throw new Error(`datasets.${i}.source.datasetId: dataset ${id} is not stored in Troupe (deleted?)`);
      const digest = createHash("sha256").update(row.content).digest("hex");
      if (row.sha256 && digest !== row.sha256) throw new Error(`datasets.${i}.source.datasetId: dataset ${id} is corrupted (sha256 mismatch)`);
      const format = String(source.format ?? row.format);
      const path = join(DATASETS_DIR, datasetFileName(i, String(dataset.name), format));
      await writeFile(join(workDir, path), row.content);
      return { ...dataset, source: { kind: "file", path, format } };
    }),
  );
  return { ...doc, datasets: rewritten };
}

/**
 * Writes what the runtime reads: `<work dir>/<run id>/spec.json` (the frozen spec as stored on the
 * Run row, with stored datasets turned into files written next to it).
 */
export async function materialiseRun(files: RunFiles, spec: unknown, db?: Db): Promise<void> {
  await mkdir(files.workDir, { recursive: true });
  const runtimeSpec = db ? await materialiseStoredDatasets(db, files.workDir, spec) : spec;
  await writeFile(files.specPath, `${JSON.stringify(runtimeSpec, null, 2)}\n`, "utf8");
}
