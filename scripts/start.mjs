// Starts Troupe: Postgres + Redis (ours unless DATABASE_URL / REDIS_URL are set), migrations,
// the demo seed, the web app and one runner.
//
// Ctrl-C (SIGINT, also SIGTERM/SIGHUP) stops everything, in order: the runner first (each run
// stops after its current step with a checkpoint and is requeued, or is cancelled when the step
// takes longer than TROUPE_SHUTDOWN_GRACE_MS), then the web app, then Redis and Postgres, which
// both are still up while the runner writes its runs' last state. Every child runs in its own
// process group, so a terminal's Ctrl-C reaches only this script and the order is ours.
//
// A start killed with SIGKILL cannot stop anything: the next start ends what it left running (pid files in
// the data folder, lib/orphans.mjs), and a port still held is reported with the pid holding it.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureServices, ServiceError } from "./lib/services.mjs";
import { mustRun, startService, stopForeground, waitForHttp } from "./lib/proc.mjs";
import { endOrphans, forgetPid, portHolder, recordPid } from "./lib/orphans.mjs";
import { sourceHash } from "./lib/sourceHash.mjs";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const port = Number(process.env.PORT ?? 3000);
// Loopback only unless asked: a fresh start must not expose an app to the network by surprise.
const host = process.env.TROUPE_HOST || "127.0.0.1";
const dataDir = process.env.TROUPE_DATA_DIR ? resolve(process.env.TROUPE_DATA_DIR) : join(root, ".troupe/data");
const distDir = process.env.TROUPE_NEXT_DIST_DIR || ".next";
// How long a run may take to finish its current step at Ctrl-C before the runner cancels it.
const runGraceMs = Number(process.env.TROUPE_SHUTDOWN_GRACE_MS ?? 20_000);
const cancelGraceMs = Number(process.env.TROUPE_CANCEL_GRACE_MS ?? 10_000);
// The runner gets its grace, the runtime's SIGTERM→SIGKILL grace and time to store the last
// events; after that it is killed (its runs are then failed by the next start's recovery).
const runnerStopMs = runGraceMs + cancelGraceMs + 15_000;
const webStopMs = 10_000;

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

async function main() {
  const running = []; // long-running services, in start order
  let services = null;
  let stopping = false;
  let signals = 0;

  const shutdown = async (code) => {
    if (stopping) return;
    stopping = true;
    const t0 = Date.now();
    console.log(`\nstopping Troupe (at most ${seconds(runnerStopMs + webStopMs + 20_000)}; Ctrl-C again cancels running runs now)…`);
    await stopForeground();
    // Runner first: it needs Postgres and Redis to hand its runs back.
    for (const s of [...running].reverse()) {
      const t = Date.now();
      await s.stop();
      forgetPid(dataDir, s.name);
      console.log(`  ${s.name}: stopped (${seconds(Date.now() - t)})`);
    }
    if (services) await services.stop();
    console.log(`Troupe stopped in ${seconds(Date.now() - t0)}.`);
    process.exit(code);
  };
  const onSignal = (signal) => {
    signals += 1;
    if (signals === 1) return void shutdown(0);
    // A second Ctrl-C: the runner cancels its runs now (its own second-signal rule); a third kills.
    const runner = running.find((s) => s.name === "runner");
    if (signals === 2 && runner) {
      console.log(`second ${signal}: cancelling running runs now`);
      runner.signal("SIGTERM");
    } else if (signals >= 3) {
      console.log(`third ${signal}: killing the runner and the web app`);
      for (const s of running) s.kill();
    }
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => onSignal(signal));

  try {
    // What a start killed with SIGKILL left running (its pid files): ended before anything starts.
    await endOrphans(dataDir, { graceMs: runnerStopMs });
    services = await ensureServices({ dataDir, dbName: "troupe", persistRedis: true });
    const env = {
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
      PORT: String(port),
      TROUPE_SHUTDOWN_GRACE_MS: String(runGraceMs),
    };
    if (stopping) return;
    await mustRun("npm", ["run", "-s", "-w", "@troupe/db", "migrate"], { cwd: root, env, label: "migrate", ownGroup: true });
    if (stopping) return;
    await mustRun("npm", ["run", "-s", "-w", "@troupe/db", "seed"], { cwd: root, env, label: "seed demo", ownGroup: true });
    if (stopping) return;

    const hashFile = join(root, "apps/web", distDir, ".troupe-source-hash");
    const built = existsSync(hashFile) ? readFileSync(hashFile, "utf8") : null;
    if (built !== sourceHash(root)) {
      const why = built === null ? "first start" : "its sources changed since the last build";
      await mustRun("npm", ["run", "-s", "-w", "@troupe/web", "build"], { cwd: root, env, label: `build web (${why})`, ownGroup: true });
      if (stopping) return;
      // Hashed after the build, so anything the build itself rewrites counts as built.
      writeFileSync(hashFile, sourceHash(root));
    } else {
      console.log("\nweb: already built from these sources (no build)");
    }

    const nextBin = join(root, "node_modules/next/dist/bin/next");
    const holder = portHolder(port);
    if (holder) {
      const who = holder.pid ? `pid ${holder.pid} (${holder.command.slice(0, 200)})` : "a process this user cannot see";
      throw new Error(`port ${port} is already in use by ${who}: stop it, or start with PORT=<another port>`);
    }
    // Node's default 16 KiB header limit drops a long URL's connection; with room to parse it, the
    // web's proxy answers 414 instead (apps/web/src/lib/requestShape.ts, MAX_HTTP_HEADER_BYTES).
    running.push(
      startService("web", process.execPath, ["--max-http-header-size=262144", nextBin, "start", "-p", String(port), "-H", host], {
        cwd: join(root, "apps/web"),
        env,
        stopMs: webStopMs,
      }),
    );
    // Plain `node --import tsx` (no npx, no tsx launcher): one process that gets exactly the
    // signals we send it; its SIGTERM means "stop each run after its step and hand it back".
    running.push(
      startService("runner", process.execPath, ["--import", "tsx", "src/main.ts"], {
        cwd: join(root, "apps/runner"),
        // The runner has no use for the first administrator's credentials (spawn drops undefined values).
        env: { ...env, TROUPE_ADMIN_PASSWORD: undefined, TROUPE_ADMIN_EMAIL: undefined },
        stopMs: runnerStopMs,
        signalGroup: false,
      }),
    );
    for (const s of running) {
      recordPid(dataDir, s.name, s.child.pid);
      s.exited.then(({ code, signal }) => {
        if (!stopping) {
          console.error(`${s.name} exited (${signal ?? `code ${code}`}); stopping Troupe`);
          void shutdown(1);
        }
      });
    }
    const probeHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
    await waitForHttp(`http://${probeHost.includes(":") ? `[${probeHost}]` : probeHost}:${port}/api/health`, { service: running[0] });
    if (stopping) return;
    const where =
      host === "127.0.0.1" || host === "localhost"
        ? `http://localhost:${port}\n  Listening on ${host} only: other machines cannot connect (TROUPE_HOST=0.0.0.0 opens it to the network).`
        : `http://${host === "0.0.0.0" || host === "::" ? hostname() : host}:${port}\n  Listening on ${host} (TROUPE_HOST).`;
    const stops = ["runner", "web", ...[...services.started].reverse()].join(", then ");
    console.log(`\n  Troupe is running: ${where}\n  Ctrl-C stops ${stops}.\n`);
  } catch (e) {
    if (stopping) return;
    console.error(`error: ${e instanceof Error ? e.message : e}`);
    if (!services) process.exit(1); // nothing was started (ensureServices cleans up after itself)
    await shutdown(1);
  }
}

main().catch((e) => {
  console.error(e instanceof ServiceError ? `error: ${e.message}` : e);
  process.exit(1);
});
