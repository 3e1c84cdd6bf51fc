import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** The runtime's layout (gpu-runtime checkpointing.py): `<work dir>/checkpoints/step-N/trainer_state.json`. */
const STEP_DIR = /^step-(\d+)$/;
const STATE_FILE = "trainer_state.json";

export interface DiskCheckpoint {
  step: number;
  path: string;
}

/**
 * The newest complete checkpoint in a run's work folder, or null. The disk, not Postgres, is what a
 * resume can use: a checkpoint whose event was never stored (Postgres away as it was written) is
 * still there. A folder without its state file is a save cut short (the runtime writes the state
 * last and renames the folder into place), so it is skipped.
 */
export function latestCheckpointOnDisk(workDir: string): DiskCheckpoint | null {
  const root = join(workDir, "checkpoints");
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return null;
  }
  let best: DiskCheckpoint | null = null;
  for (const name of names) {
    const match = STEP_DIR.exec(name);
    if (!match) continue;
    const step = Number(match[1]);
    const path = join(root, name);
    if ((best === null || step > best.step) && existsSync(join(path, STATE_FILE))) best = { step, path };
  }
  return best;
}
