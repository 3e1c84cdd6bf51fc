import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { latestCheckpointOnDisk } from "../src/run/diskCheckpoints";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workDir(checkpoints: Record<string, boolean>): string {
  const dir = mkdtempSync(join(tmpdir(), "troupe-ckpt-"));
  dirs.push(dir);
  for (const [name, complete] of Object.entries(checkpoints)) {
    mkdirSync(join(dir, "checkpoints", name), { recursive: true });
    if (complete) writeFileSync(join(dir, "checkpoints", name, "trainer_state.json"), "{}");
  }
  return dir;
}

describe("the newest checkpoint on disk", () => {
  it("is the highest complete step folder, by number, not by name", () => {
    const dir = workDir({ "step-80": true, "step-120": true, "step-9": true, "step-200": false, "step-120.partial": true, "notes": true });
    expect(latestCheckpointOnDisk(dir)).toEqual({ step: 120, path: join(dir, "checkpoints", "step-120") });
  });

  it("is null without a checkpoints folder or a complete checkpoint", () => {
    expect(latestCheckpointOnDisk(workDir({}))).toBeNull();
    expect(latestCheckpointOnDisk(workDir({ "step-3": false }))).toBeNull();
  });
});
