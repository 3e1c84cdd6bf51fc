import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";

/**
 * A Redis outage as the web app meets it, against a real redis-server this test stops and starts:
 * while it is down, requests that need Redis fail fast (no request hangs until it is back) with an
 * error classed as "Redis is down" (→ 503), and the web log says so in ONE line per outage (plus one
 * when it is back), never ioredis's "Unhandled error event" per connection and retry.
 */

const root = join(import.meta.dirname, "../../..");

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("Ready to accept connections")) resolve(child);
    });
    child.on("exit", (code) => reject(new Error(`redis-server exited (${code})`)));
  });
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

let redis: ChildProcess | undefined;
let probe: ChildProcess | undefined;
afterAll(async () => {
  probe?.kill("SIGKILL");
  await stop(redis);
});

describe("Redis outage (real redis-server stopped and started)", () => {
  it("fails fast with a Redis-down error while it is down, logs one line per outage and one when back", async () => {
    const port = await freePort();
    redis = await startRedis(port);
    probe = spawn(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "fixtures/redisOutageProbe.ts")], {
      cwd: root,
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}/0` },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    probe.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const phases = createInterface({ input: probe.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse((await phases.next()).value as string);

    const up = await next();
    expect(up.ping.ok, `${JSON.stringify(up)} ${stderr}`).toBe(true);
    expect(up.add.ok).toBe(true);

    await stop(redis);
    probe.stdin!.write("stopped\n");
    const down = await next();
    for (const attempt of down.during) {
      expect(attempt.ping.ok).toBe(false);
      expect(attempt.ping.down).toBe("Redis");
      expect(attempt.add.ok).toBe(false);
      expect(attempt.add.down).toBe("Redis");
      // Bounded, not "until Redis is back": a command waits out at most 3 reconnect attempts
      // (ioredis backs off up to 2 s each); the queue has no offline queue and fails at once.
      expect(attempt.ping.ms).toBeLessThan(10_000);
      expect(attempt.add.ms).toBeLessThan(1000);
    }

    redis = await startRedis(port);
    probe.stdin!.write("started\n");
    const back = await next();
    expect(back.ping.ok).toBe(true);
    expect(back.add.ok).toBe(true);

    const logLines = stderr.split("\n").filter((l) => l.trim() !== "");
    expect(logLines.filter((l) => l.includes("is unreachable")), stderr).toHaveLength(1);
    expect(logLines.filter((l) => l.includes("is reachable again")), stderr).toHaveLength(1);
    expect(stderr).not.toContain("Unhandled error event");
    expect(logLines.length, stderr).toBeLessThanOrEqual(2);
  }, 120_000);
});
