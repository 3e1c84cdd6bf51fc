import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

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

/**
 * Writes what the runtime reads: `<work dir>/<run id>/spec.json`, the frozen spec exactly as
 * stored on the Run row. (Dataset files and reward code will be written here too.)
 */
export async function materialiseRun(files: RunFiles, spec: unknown): Promise<void> {
  await mkdir(files.workDir, { recursive: true });
  await writeFile(files.specPath, `${JSON.stringify(spec, null, 2)}\n`, "utf8");
}
