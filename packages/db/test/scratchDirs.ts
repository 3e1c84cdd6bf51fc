import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Temporary folders a test file makes; `removeAll()` in afterAll. */
export class ScratchDirs {
  private readonly dirs: string[] = [];

  make(prefix: string): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }

  removeAll(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}
