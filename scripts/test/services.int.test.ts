import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: plain ESM JavaScript helper without type declarations
import { ensureServices, freePort } from "../lib/services.mjs";

const saved = { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL, PATH: process.env.PATH };
afterEach(() => Object.assign(process.env, saved));
const quiet = () => {};

describe("ensureServices", () => {
  it("names the variable when DATABASE_URL points nowhere", async () => {
    process.env.DATABASE_URL = `postgresql://postgres@127.0.0.1:${await freePort()}/x`;
    await expect(ensureServices({ dataDir: "/nonexistent", dbName: "x", log: quiet })).rejects.toThrow(
      /DATABASE_URL is set but Postgres there is not reachable/,
    );
  });

  it("uses reachable DATABASE_URL and REDIS_URL as they are, starting nothing", async () => {
    const s = await ensureServices({ dataDir: "/nonexistent", dbName: "x", log: quiet });
    expect(s.started).toEqual([]);
    expect(s.databaseUrl).toBe(process.env.DATABASE_URL);
    expect(s.redisUrl).toBe(process.env.REDIS_URL);
    await s.stop();
  });

  it("says which package to install when redis-server is missing", async () => {
    delete process.env.REDIS_URL;
    process.env.PATH = "/nonexistent-bin";
    await expect(ensureServices({ dataDir: "/nonexistent", dbName: "x", log: quiet })).rejects.toThrow(
      /redis-server not found: install it \(Debian\/Ubuntu: `apt-get install redis-server`\)/,
    );
  });

  it("starts its own Redis when REDIS_URL is unset, and stops it", async () => {
    delete process.env.REDIS_URL;
    const dir = mkdtempSync(join(tmpdir(), "troupe-svc-"));
    try {
      const s = await ensureServices({ dataDir: dir, dbName: "x", persistRedis: false, log: quiet });
      expect(s.started).toEqual(["redis"]);
      const port = Number(new URL(s.redisUrl).port);
      const net = await import("node:net");
      const reachable = () =>
        new Promise<boolean>((res) => {
          const sock = net.connect({ host: "127.0.0.1", port }, () => (sock.destroy(), res(true)));
          sock.on("error", () => res(false));
        });
      expect(await reachable()).toBe(true);
      await s.stop();
      expect(await reachable()).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
