import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM JavaScript helper without type declarations
import { ensureServices, ServiceError } from "../lib/services.mjs";

/**
 * As root, the embedded Postgres runs as the `postgres` user. A data folder under a folder that user
 * cannot enter (a `mktemp -d` folder, /root) died inside initdb with a bare `spawn … EACCES` stack;
 * the start and test scripts now say which folder and what to do. Only root meets this case (any
 * other user runs Postgres as themselves); the machines this project is tested on run as root.
 */
const asRoot = process.getuid?.() === 0;
const saved = { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL };
let dir: string | null = null;
afterEach(() => {
  Object.assign(process.env, saved);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(asRoot)("embedded Postgres in a folder the postgres user cannot enter", () => {
  it("says which folder and what to do, with no stack and nothing started", async () => {
    dir = mkdtempSync(join(tmpdir(), "troupe-private-"));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    delete process.env.DATABASE_URL;
    delete process.env.REDIS_URL;
    const error = await ensureServices({ dataDir: join(dir, "clone/.troupe/data"), dbName: "x", log: () => {} }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceError);
    const message = (error as Error).message;
    expect(message).toContain(`cannot enter ${dir} (mode 0700, owner root)`);
    expect(message).toContain(`chmod o+x ${dir}`);
    expect(message).toMatch(/DATABASE_URL/);
    expect(message).not.toMatch(/EACCES|\n\s+at /);
  });
});
