import { execFileSync, execSync, spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { DEMO_SPEC_INPUT, QUEUES, RunSpec } from "@troupe/contracts";
import { createDb } from "@troupe/db";
import { createQueuedRun } from "../../apps/web/src/features/runs/server/createRun";
// @ts-expect-error: plain ESM JavaScript helper without type declarations
import { freePort } from "../lib/services.mjs";

/**
 * The real `scripts/start.sh`, as a newcomer uses it, in a fresh copy of this working tree (what
 * git would clone: tracked and unignored files; node_modules hard-linked, the Python venv linked,
 * so nothing is downloaded): start, launch a run, Ctrl-C, start again, Ctrl-C again. Ctrl-C is a SIGINT to the script's whole process group, as a terminal sends it.
 * After each stop no process the start created may be left (Postgres, Redis, next-server, the
 * runner, the runtime's Python); the interrupted run must not end `failed`; the second start must
 * not rebuild the web app. Then the second start is killed with SIGKILL (its services orphaned, the web app
 * holding the port) and a third start must end those orphans by the pid files the second wrote, and run.
 */

const repo = resolve(fileURLToPath(import.meta.url), "../../..");
/** The copy lives inside the repository's own ignored folder, so the postgres user can reach it as it reaches the repo. */
const work = join(repo, ".troupe", `start-test-${process.pid}`);
const root = join(work, "clone");
const dataDir = join(work, "data");

/** A clone of the working tree as it is now, that nobody else edits while the test runs. */
function makeClone() {
  mkdirSync(root, { recursive: true });
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: repo, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const f of files) {
    if (existsSync(join(repo, f))) cpSync(join(repo, f), join(root, f), { recursive: true, verbatimSymlinks: true });
  }
  // What setup.sh would install, without a network: hard links (no copy) and a link to the venv.
  for (const nm of ["node_modules", "apps/web/node_modules"]) {
    if (existsSync(join(repo, nm))) execFileSync("cp", ["-al", join(repo, nm), join(root, nm)]);
  }
  symlinkSync(join(repo, ".venv"), join(root, ".venv"));
  cpSync(join(repo, "packages/db/src/generated"), join(root, "packages/db/src/generated"), { recursive: true });
}
/** Everything up to here, one line at most: what the script promises in its README. */
const STOP_BOUND_MS = 60_000;

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startScript(port: number): Started {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: String(port), TROUPE_DATA_DIR: dataDir };
  delete env.TROUPE_NEXT_DIST_DIR; // the clone's own default build folder
  delete env.DATABASE_URL; // the script starts its own Postgres and Redis, as on a fresh machine
  delete env.REDIS_URL;
  const child = spawn("bash", ["scripts/start.sh"], { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
  return { child, output: () => out, exited };
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, started?: Started) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (started && started.child.exitCode !== null) throw new Error(`start script exited before ${what}:\n${started.output().slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${started?.output().slice(-4000) ?? ""}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface Proc {
  pid: number;
  ppid: number;
  cmd: string;
  cwd: string;
}

function processes(): Proc[] {
  const list: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z") continue; // a zombie is gone, only not yet reaped
      let cwd = "";
      try {
        cwd = readlinkSync(`/proc/${name}/cwd`);
      } catch {}
      list.push({ pid: Number(name), ppid: Number(fields[1]), cmd: readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ").trim(), cwd });
    } catch {}
  }
  return list;
}

/** The processes descending from `pid` now (children in their own process groups included). */
function descendants(pid: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  const frontier = [pid];
  while (frontier.length) {
    const p = frontier.pop()!;
    for (const c of all.filter((x) => x.ppid === p)) {
      found.push(c);
      frontier.push(c.pid);
    }
  }
  return found;
}

/** Of the given processes, those still alive; plus any process working in this test's data folder. */
function leftovers(seen: Proc[]): Proc[] {
  const alive = processes();
  const pids = new Set(seen.map((p) => p.pid));
  return alive.filter((p) => pids.has(p.pid) || p.cwd.startsWith(dataDir) || p.cmd.includes(dataDir));
}

const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|\(node:.+\))$/m;

function dbUrlFrom(output: string): string {
  const m = output.match(/postgres: started in .+ \(postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:(\d+)\/troupe\)/);
  if (!m) throw new Error(`no Postgres URL in the output:\n${output}`);
  return `postgresql://postgres:postgres@127.0.0.1:${m[1]}/troupe`;
}

function redisUrlFrom(output: string): string {
  const m = output.match(/redis: started \((redis:\/\/127\.0\.0\.1:\d+)\)/);
  if (!m) throw new Error(`no Redis URL in the output:\n${output}`);
  return m[1]!;
}

/** Ctrl-C: SIGINT to the script's process group. Resolves with the exit code and the time taken. */
async function ctrlC(s: Started): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  process.kill(-s.child.pid!, "SIGINT");
  const code = await Promise.race([s.exited, new Promise<null>((r) => setTimeout(() => r(null), STOP_BOUND_MS + 30_000))]);
  return { code, ms: Date.now() - t0 };
}

let current: Started | null = null;
afterAll(async () => {
  // A failed assertion must not leave a start running.
  if (current && current.child.exitCode === null) {
    const seen = descendants(current.child.pid!);
    process.kill(-current.child.pid!, "SIGINT");
    await Promise.race([current.exited, new Promise((r) => setTimeout(r, STOP_BOUND_MS))]);
    for (const p of leftovers(seen)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {}
    }
  }
  rmSync(work, { recursive: true, force: true });
});

describe("scripts/start.sh", () => {
  it(
    "Ctrl-C stops everything in order with no process left and the run handed back; a second start does not build",
    async () => {
      makeClone();
      const port = await freePort();

      // ---- first start (builds the web app when its sources changed) ----
      current = startScript(port);
      const first = current;
      await waitFor("Troupe is running", () => first.output().includes("Troupe is running"), 20 * 60_000, first);
      expect(first.output()).toContain(`Listening on 127.0.0.1 only`);
      const health = await fetch(`http://127.0.0.1:${port}/api/health`);
      expect(health.status).toBeLessThan(500);

      // A run that trains long enough to be interrupted.
      const db = createDb(dbUrlFrom(first.output()));
      const redis = new Redis(redisUrlFrom(first.output()), { maxRetriesPerRequest: null });
      const runQueue = new Queue(QUEUES.runs.name, { connection: redis });
      const spec = RunSpec.parse({ ...DEMO_SPEC_INPUT, name: "start-test-interrupted", trainer: { ...DEMO_SPEC_INPUT.trainer, steps: 5000 } });
      const { runId } = await createQueuedRun({ db, redis, runQueue } as never, { spec, experimentId: null, priority: 50, source: "api", message: "queued by the start test" });
      await waitFor(
        "the run to train a step",
        async () => (await db.metricPoint.count({ where: { runId } })) > 0,
        5 * 60_000,
        first,
      );
      await runQueue.close();
      redis.disconnect();
      await db.$disconnect();

      const seen = descendants(first.child.pid!);
      const names = seen.map((p) => p.cmd).join("\n");
      expect(names).toMatch(/postgres -D/);
      expect(names).toMatch(/redis-server/);
      expect(names).toMatch(/next-server|next\/dist\/bin\/next/);
      expect(names).toMatch(/python.* -m troupe/);

      const stop1 = await ctrlC(first);
      expect(stop1.code, first.output().slice(-3000)).toBe(0);
      expect(stop1.ms).toBeLessThan(STOP_BOUND_MS);
      expect(first.output()).toContain("Troupe stopped in");
      console.log(`first Ctrl-C: exit ${stop1.code} after ${stop1.ms} ms\n${first.output().slice(first.output().indexOf("stopping Troupe"))}`);
      // Stopped in order: the runner before the web app, both before Redis and Postgres.
      const out1 = first.output();
      const order = ["runner: stopped", "web: stopped", "redis: stopped", "postgres: stopped"].map((s) => out1.indexOf(s));
      expect(order.every((i) => i >= 0), out1.slice(-3000)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(out1.slice(out1.indexOf("stopping Troupe"))).not.toMatch(STACK_LINE);
      await new Promise((r) => setTimeout(r, 500));
      expect(leftovers(seen).map((p) => `${p.pid} ${p.cmd}`)).toEqual([]);

      // What the build itself rewrites must not count as a change (next-env.d.ts is rewritten by
      // every build); neither does a file whose time changed but not its bytes.
      const nextEnv = join(root, "apps/web/next-env.d.ts");
      if (existsSync(nextEnv)) writeFileSync(nextEnv, `${readFileSync(nextEnv, "utf8")}\n`);
      const later = new Date();
      utimesSync(join(root, "apps/web/src/app/layout.tsx"), later, later);

      // ---- second start: nothing changed, no build; the run is not failed ----
      current = startScript(port);
      const second = current;
      await waitFor("Troupe is running (second start)", () => second.output().includes("Troupe is running"), 10 * 60_000, second);
      expect(second.output()).not.toContain("=== build web");
      expect(second.output()).toContain("already built from these sources");
      console.log(`second start:\n${second.output()}`);
      const db2 = createDb(dbUrlFrom(second.output()));
      const run = await db2.run.findUniqueOrThrow({ where: { id: runId } });
      await db2.$disconnect();
      expect(run.status, `${run.status}: ${run.error ?? ""}`).not.toBe("failed");
      expect(["cancelled", "stopped", "queued", "running", "succeeded"]).toContain(run.status);
      expect(run.error ?? "").not.toMatch(/restarted/);

      // ---- the second start is killed with SIGKILL (no shutdown runs); a third start ends its orphans ----
      const seen2 = descendants(second.child.pid!);
      process.kill(second.child.pid!, "SIGKILL");
      await second.exited;
      expect(seen2.filter((p) => /next-server|next\/dist\/bin\/next/.test(p.cmd)).length).toBeGreaterThan(0);
      current = startScript(port);
      const third = current;
      await waitFor("Troupe is running (after a SIGKILLed start)", () => third.output().includes("Troupe is running"), 10 * 60_000, third);
      console.log(`third start:\n${third.output()}`);
      // The web app holds the port, so the third start must have ended it. The runner may already have ended on its
      // own (it loses Redis and Postgres with the killed start); either way none of the killed start's runners may
      // still be alive once the third start runs.
      expect(third.output()).toMatch(/web: pid \d+ was left running by an earlier start that was killed/);
      const runnerPids = seen2.filter((p) => /apps\/runner|src\/main\.ts/.test(p.cmd)).map((p) => p.pid);
      const stillAlive = runnerPids.filter((pid) => {
        try {
          process.kill(pid, 0);
          return !/zombie|<defunct>/.test(execSync(`ps -o stat=,args= -p ${pid}`, { encoding: "utf8" }));
        } catch {
          return false;
        }
      });
      expect(stillAlive, third.output()).toEqual([]);
      expect(third.output()).not.toContain("EADDRINUSE");

      const seen3 = descendants(third.child.pid!);
      const stop3 = await ctrlC(third);
      expect(stop3.code).toBe(0);
      expect(stop3.ms).toBeLessThan(STOP_BOUND_MS);
      await new Promise((r) => setTimeout(r, 500));
      expect(leftovers([...seen2, ...seen3]).map((p) => `${p.pid} ${p.cmd}`)).toEqual([]);
      current = null;
    },
    30 * 60_000,
  );
});
