import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_SPEC_INPUT, QUEUES, RunSpec, type StatusEvent } from "@troupe/contracts";
import { createDb, type Db } from "@troupe/db";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runJobId } from "@troupe/contracts";
import { startOwnPostgres, startOwnRedis, startRunnerProcess, sleep, type OwnPostgres, type OwnRedis, type RunnerProcess } from "./helpers/ownServices";
import { RUNTIME_PYTHON, runtimeUnavailable } from "./helpers/realRuntime";
import { FAKE_RUNTIME_PATH, uniqueId } from "./helpers/services";

/**
 * Faults injected by the test itself into its OWN Postgres and Redis, with the runner as a real
 * process: Redis flushed with runs queued, Postgres stopped across a run's end, the runner SIGTERMed
 * mid-run (a deploy) and killed with -9. Times measured are printed (`[faults] ...`).
 */

let pg: OwnPostgres;
let redis: OwnRedis;
let db: Db;
let client: Redis;
let queue: Queue;
let workRoot: string;
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  [pg, redis] = await Promise.all([startOwnPostgres("faults-pg"), startOwnRedis()]);
  db = createDb(pg.url);
  client = new Redis(redis.url, { maxRetriesPerRequest: null });
  client.on("error", () => undefined); // Redis is stopped at the end while these may still reconnect
  const queueConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
  queueConnection.on("error", () => undefined);
  queue = new Queue(QUEUES.runs.name, { connection: queueConnection });
  workRoot = mkdtempSync(join(tmpdir(), "troupe-faults-"));
}, 180_000);

afterAll(async () => {
  for (const r of runners) if (r.child.exitCode === null) r.child.kill("SIGKILL");
  await queue?.close();
  client?.disconnect();
  await db?.$disconnect();
  await redis?.stop();
  await pg?.destroy();
  rmSync(workRoot, { recursive: true, force: true });
}, 60_000);

const STALL_MS = 6_000;

function runner(id: string, extra: Record<string, string> = {}): RunnerProcess {
  const r = startRunnerProcess({
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    TROUPE_WORK_DIR: workRoot,
    TROUPE_RUNNER_ID: id,
    TROUPE_RUNNER_GPUS: "0",
    TROUPE_STALL_TIMEOUT_MS: String(STALL_MS),
    TROUPE_HEARTBEAT_MS: "1000",
    TROUPE_REQUEUE_CHECK_MS: "500",
    TROUPE_CANCEL_GRACE_MS: "2000",
    TROUPE_PYTHON: "python3",
    PYTHONPATH: FAKE_RUNTIME_PATH,
    ...extra,
  });
  runners.push(r);
  return r;
}

/** What the web does: a queued Run row with its seq-1 event, then the job (id = run id). */
async function launch(spec: unknown, enqueue = true): Promise<string> {
  const now = new Date();
  const queued: StatusEvent = { seq: 1, ts: now.getTime(), type: "status", state: "queued" };
  const run = await db.run.create({
    data: { name: uniqueId("faults"), spec: spec as object, specVersion: 1, seed: 1, lastSeq: 1, status: "queued", events: { create: { seq: 1, type: "status", ts: now, payload: queued } } },
  });
  if (enqueue) await queue.add("run", QUEUES.runs.jobs.run.parse({ runId: run.id }), { jobId: run.id });
  return run.id;
}

const row = (runId: string) => db.run.findUniqueOrThrow({ where: { id: runId } });
const states = async (runId: string) =>
  (await db.runEvent.findMany({ where: { runId, type: "status" }, orderBy: { seq: "asc" } })).map((e) => (e.payload as { state: string }).state);
const metricSteps = async (runId: string, name?: string) =>
  (await db.runEvent.findMany({ where: { runId, type: "metric" }, orderBy: { seq: "asc" } }))
    .filter((e) => name === undefined || name in (e.payload as { values: Record<string, number> }).values)
    .map((e) => (e.payload as { step: number }).step);
const steps = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

async function stop(r: RunnerProcess, signal: NodeJS.Signals = "SIGTERM") {
  if (r.child.exitCode === null) r.child.kill(signal);
  return r.exited;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const LIVE = new Set(["waiting", "prioritized", "delayed", "active"]);

describe("faults", () => {
  it("Redis flushed with runs queued: every queued run's job is back within seconds, and they all run", { timeout: 240_000 }, async () => {
    const a = runner(uniqueId("flush-a"));
    await a.waitForLine(/runner .* started/);
    const blocker = await launch({ fixture: { mode: "succeed", steps: 40, stepMs: 100 } });
    await until("the blocker to run", async () => (await row(blocker)).status === "running", 60_000);
    const waiting = [await launch({ fixture: { mode: "succeed", steps: 2 } }), await launch({ fixture: { mode: "succeed", steps: 2 } }), await launch({ fixture: { mode: "succeed", steps: 2 } })];
    for (const id of waiting) expect(LIVE.has(await queue.getJobState(id))).toBe(true);

    const flushedAt = Date.now();
    await client.flushall();
    expect(await queue.getJobState(waiting[0]!)).toBe("unknown");
    await until("the waiting runs' jobs to be back", async () => {
      for (const id of waiting) if (!LIVE.has(await queue.getJobState(id))) return false;
      return true;
    }, 30_000);
    const requeueMs = Date.now() - flushedAt;
    console.log(`[faults] Redis FLUSHALL with 3 runs waiting: jobs back after ${requeueMs} ms (TROUPE_REQUEUE_CHECK_MS=500)`);
    expect(requeueMs).toBeLessThan(5_000);
    await until("all four to succeed", async () => (await db.run.count({ where: { id: { in: [blocker, ...waiting] }, status: "succeeded" } })) === 4, 120_000);

    // Flushed while no runner runs: the next runner's start puts the jobs back.
    expect((await stop(a)).code).toBe(0);
    const later = [await launch({ fixture: { mode: "succeed", steps: 2 } }), await launch({ fixture: { mode: "succeed", steps: 2 } })];
    await client.flushall();
    const startedAt = Date.now();
    const b = runner(uniqueId("flush-b"));
    await until("the later runs to succeed", async () => (await db.run.count({ where: { id: { in: later }, status: "succeeded" } })) === 2, 120_000);
    console.log(`[faults] Redis flushed before a runner start: both queued runs succeeded ${Date.now() - startedAt} ms after the runner was started`);
    expect(b.lines.join("\n")).toMatch(/requeued 2 of 2 queued run\(s\) \(runner start\)/);
    expect((await stop(b)).code).toBe(0);
  });

  it("Postgres stopped across a run's end: the run succeeds with every step stored, and no runner fails it", { timeout: 240_000 }, async () => {
    // Two runners: the one that takes the run, and another whose stall sweeper sees the run's heartbeat go stale.
    const pair = [runner(uniqueId("pg-a"), { TROUPE_DB_RETRY_MS: "120000" }), runner(uniqueId("pg-b"), { TROUPE_DB_RETRY_MS: "120000" })];
    await Promise.all(pair.map((r) => r.waitForLine(/runner .* started/)));
    const total = 60;
    const runId = await launch({ fixture: { mode: "succeed", steps: total, stepMs: 150 } });
    await until("step 5", async () => ((await row(runId)).lastStep ?? 0) >= 5, 60_000);
    const ownerId = (await row(runId)).runnerId!;
    const owner = pair.find((r) => r.lines.some((l) => l.includes(`runner ${ownerId} started`)))!;
    const other = pair.find((r) => r !== owner)!;
    const target = Math.min(total - 10, ((await row(runId)).lastStep ?? 0) + 8);
    await until(`step ${target}`, async () => ((await row(runId)).lastStep ?? 0) >= target, 60_000);
    const runtimePid = (await row(runId)).pid!;

    await pg.stop();
    const downAt = Date.now();
    try {
      // The runtime ends meanwhile, and its last events, log and final status wait; the outage outlasts the stall timeout.
      await owner.waitForLine(/storing output failed \(will retry\)/, 30_000);
      await until("the runtime to exit", async () => !processAlive(runtimePid), 60_000);
      await sleep(2 * STALL_MS);
    } finally {
      await pg.start();
    }
    const upAt = Date.now();
    const done = await until("the run to end", async () => {
      const r = await row(runId);
      return r.status !== "running" ? r : null;
    }, 120_000);
    console.log(`[faults] Postgres down ${upAt - downAt} ms across the run's end; final status written ${Date.now() - upAt} ms after it came back`);
    expect({ status: done.status, error: done.error, lastStep: done.lastStep }).toEqual({ status: "succeeded", error: null, lastStep: total });
    expect(await metricSteps(runId)).toEqual(steps(total));
    expect(await db.metricPoint.count({ where: { runId, name: "loss" } })).toBe(total);
    expect(await states(runId)).toEqual(["queued", "running", "succeeded"]);
    const logs = await db.logLine.findMany({ where: { runId }, orderBy: { lineNo: "asc" } });
    expect(logs.map((l) => l.text)).toEqual(expect.arrayContaining([`step ${total} done`, expect.stringMatching(/exited with code 0$/)]));
    // Give the other runner's sweeper time to look at the run after the outage: it must leave it alone.
    await sleep(STALL_MS);
    expect((await row(runId)).status).toBe("succeeded");
    expect(other.lines.join("\n")).not.toMatch(new RegExp(`run=${runId} running → failed`));
    await Promise.all(pair.map((r) => stop(r)));
  });

  const realTitle = "SIGTERM mid-run (a deploy): the runner stops the run after its step with a checkpoint and exits; the next runner resumes it from that step, every step exactly once, same values as an uninterrupted run";
  const unavailable = runtimeUnavailable();
  it.skipIf(unavailable !== null)(unavailable ? `${realTitle} — SKIPPED: ${unavailable}` : realTitle, { timeout: 600_000 }, async () => {
    // A longer stall timeout than the other tests: torch on a busy 2-core machine can starve the runner's lock renewals.
    const real = { TROUPE_PYTHON: RUNTIME_PYTHON, PYTHONPATH: "", HF_HUB_OFFLINE: "1", TROUPE_STALL_TIMEOUT_MS: "30000", TROUPE_HEARTBEAT_MS: "2000" };
    // Steps long and many enough that the SIGTERM sent once step 3 is seen stored lands well before the last step:
    // with 40 steps of 2 prompts a quiet machine ran them all (~0.15 s each) before the signal, and nothing was
    // left to resume; with 8 prompts the signal landed at step 22 of 40 (the row's lastStep trails the runtime).
    const total = 60;
    const spec = RunSpec.parse({ ...DEMO_SPEC_INPUT, trainer: { ...DEMO_SPEC_INPUT.trainer, steps: total, checkpointEvery: 0, cpuThreads: 1, promptsPerStep: 8 } });
    const a = runner(uniqueId("deploy-a"), real);
    await a.waitForLine(/runner .* started/);
    const runId = await launch(spec);
    await until("step 3", async () => ((await row(runId)).lastStep ?? 0) >= 3, 240_000);

    const termAt = Date.now();
    a.child.kill("SIGTERM");
    const exit = await a.exited;
    const exitMs = Date.now() - termAt;
    const handedBack = await row(runId);
    console.log(a.lines.filter((l) => /shutting down|control|→|stopped/.test(l)).join("\n"));
    console.log(`[faults] SIGTERM at step >= 3: runner exited ${exit.code} after ${exitMs} ms; run ${handedBack.status}, resume step ${handedBack.resumeStep}`);
    expect(exit.code).toBe(0);
    expect({ status: handedBack.status, error: handedBack.error, finishedAt: handedBack.finishedAt }).toEqual({ status: "queued", error: null, finishedAt: null });
    const from = handedBack.resumeStep!;
    expect(from).toBeGreaterThanOrEqual(3);
    expect(from).toBeLessThan(total);
    expect(LIVE.has(await queue.getJobState(runJobId(runId, handedBack.attempt)))).toBe(true);

    const b = runner(uniqueId("deploy-b"), real);
    const startedAt = Date.now();
    const done = await until("the resumed run to end", async () => {
      const r = await row(runId);
      return r.status === "succeeded" || r.status === "failed" ? r : null;
    }, 300_000);
    console.log(`[faults] next runner finished the resumed run ${Date.now() - startedAt} ms after it started`);
    expect({ status: done.status, error: done.error, attempt: done.attempt, lastStep: done.lastStep }).toEqual({ status: "succeeded", error: null, attempt: 2, lastStep: total });
    expect(await metricSteps(runId, "reward/mean")).toEqual(steps(total));
    expect(await states(runId)).toEqual(["queued", "running", "queued", "running", "succeeded"]);
    const logText = (await db.logLine.findMany({ where: { runId }, orderBy: { lineNo: "asc" } })).map((l) => l.text).join("\n");
    expect(logText).toContain(`step-${from}`);

    // The same spec without interruption gives the same values at every step (exact resume).
    const reference = await launch(spec);
    await until("the reference run to succeed", async () => (await row(reference)).status === "succeeded", 300_000);
    const values = async (id: string) =>
      (await db.metricPoint.findMany({ where: { runId: id, name: "reward/mean" }, orderBy: { step: "asc" } })).map((p) => [p.step, p.value]);
    expect(await values(runId)).toEqual(await values(reference));
    expect((await stop(b)).code).toBe(0);
  });

  it("signals: two within 1 s count as one (a hand-over); a second one later cancels the runs now", { timeout: 180_000 }, async () => {
    const a = runner(uniqueId("sig-a"));
    await a.waitForLine(/runner .* started/);
    // Long steps: a SIGINT counted as a second signal would cancel the run before the step ends.
    const handed = await launch({ fixture: { mode: "forever", stepMs: 2_000 } });
    await until("step 1", async () => ((await row(handed)).lastStep ?? 0) >= 1, 60_000);
    a.child.kill("SIGTERM");
    await sleep(100);
    a.child.kill("SIGINT"); // Ctrl-C reaching the runner as well as the script that forwards SIGTERM
    expect((await a.exited).code).toBe(0);
    expect((await row(handed)).status).toBe("queued");
    await db.run.update({ where: { id: handed }, data: { status: "cancelled" } }); // not for the next runner

    const b = runner(uniqueId("sig-b"));
    await b.waitForLine(/runner .* started/);
    const stubborn = await launch({ fixture: { mode: "forever", stepMs: 100, ignoreStopAfterStep: true } });
    await until("step 2", async () => ((await row(stubborn)).lastStep ?? 0) >= 2, 60_000);
    b.child.kill("SIGTERM");
    await b.waitForLine(/control stop_after_step: sent/, 30_000);
    await sleep(1_500);
    b.child.kill("SIGTERM");
    expect((await b.exited).code).toBe(0);
    const cancelled = await row(stubborn);
    expect({ status: cancelled.status, error: cancelled.error }).toEqual({ status: "cancelled", error: expect.stringContaining("shut down") });
    expect(b.lines.join("\n")).toMatch(/cancelling 1 running run\(s\) \(second SIGTERM\)/);
  });

  it("kill -9 of the runner: as before, the run is failed as abandoned by another runner once its heartbeat is stale", { timeout: 180_000 }, async () => {
    const a = runner(uniqueId("kill-a"));
    await a.waitForLine(/runner .* started/);
    const runId = await launch({ fixture: { mode: "forever", stepMs: 100 } });
    await until("step 3", async () => ((await row(runId)).lastStep ?? 0) >= 3, 60_000);
    const b = runner(uniqueId("kill-b"));
    await b.waitForLine(/runner .* started/);
    const { pid } = await row(runId);

    a.child.kill("SIGKILL");
    const killedAt = Date.now();
    const failed = await until("the run to be failed", async () => {
      const r = await row(runId);
      return r.status === "failed" ? r : null;
    }, 60_000);
    console.log(`[faults] runner killed with -9: run failed by another runner after ${Date.now() - killedAt} ms (TROUPE_STALL_TIMEOUT_MS=${STALL_MS})`);
    expect(failed.error).toMatch(/stopped heartbeating/);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(STALL_MS - 2_000);
    if (pid) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // the orphan runtime died of its broken pipe already
      }
    }
    await stop(b);
  });
});
