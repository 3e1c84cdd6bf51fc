import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(__dirname, "../../..");

describe("runner entry point", () => {
  it("exits 1 naming the bad variable before connecting anywhere", () => {
    const env = { ...process.env, DATABASE_URL: "postgresql://u@127.0.0.1:1/x", REDIS_URL: "redis://127.0.0.1:1", TROUPE_RUNNER_CONCURRENCY: "lots" };
    const r = spawnSync(process.execPath, ["--import", "tsx", "apps/runner/src/main.ts"], { cwd: repo, env, encoding: "utf8", timeout: 30_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('invalid environment: TROUPE_RUNNER_CONCURRENCY must be a whole number ≥ 1 (got "lots")');
  });
});
