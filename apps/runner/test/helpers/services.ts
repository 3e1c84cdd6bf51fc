import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runEventStreamKey, type StatusEvent } from "@troupe/contracts";
import { appendToStream, createDb, type Db } from "@troupe/db";
import { Redis } from "ioredis";
import type { ActiveRun, RunnerContext } from "../../src/context";
import type { RunnerEnv } from "../../src/env";
import { GpuSlots } from "../../src/gpus/gpuSlots";
import { memoryLog } from "../../src/log";

/** The stand-in runtime (a `troupe` package honouring the process contract); see fixtures/. */
export const FAKE_RUNTIME_PATH = resolve(__dirname, "../fixtures/fake-runtime");

export function serviceUrls(): { databaseUrl: string; redisUrl: string } {
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    throw new Error("runner integration tests need DATABASE_URL (migrated with `npm run -w @troupe/db migrate`) and REDIS_URL");
  }
  return { databaseUrl, redisUrl };
}

export const uniqueId = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;

export interface TestServices {
  db: Db;
  redis: Redis;
  /** Runs created through `createQueuedRun`, deleted (with their streams) by `close`. */
  runIds: string[];
  workRoot: string;
  close(): Promise<void>;
}

export function openServices(): TestServices {
  const { databaseUrl, redisUrl } = serviceUrls();
  const db = createDb(databaseUrl);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const workRoot = mkdtempSync(join(tmpdir(), "troupe-runner-test-"));
  const runIds: string[] = [];
  return {
    db,
    redis,
    runIds,
    workRoot,
    async close() {
      if (runIds.length > 0) {
        await db.run.deleteMany({ where: { id: { in: runIds } } });
        await redis.del(...runIds.map(runEventStreamKey));
      }
      await db.$disconnect();
      await redis.quit();
      rmSync(workRoot, { recursive: true, force: true });
    },
  };
}

export function testEnv(services: TestServices, overrides: Partial<RunnerEnv> = {}): RunnerEnv {
  const { databaseUrl, redisUrl } = serviceUrls();
  return {
    databaseUrl,
    redisUrl,
    python: "python3",
    workDir: services.workRoot,
    runnerId: uniqueId("test-runner"),
    concurrency: 1,
    gpus: 0,
    cancelGraceMs: 500,
    stallTimeoutMs: 60_000,
    heartbeatMs: 200,
    shutdownGraceMs: 60_000,
    dbRetryMs: 60_000,
    requeueCheckMs: 200,
    requeueSweepMs: 5_000,
    presenceMs: 200,
    capabilitiesMs: 300_000,
    ...overrides,
  };
}

export function testContext(services: TestServices, overrides: Partial<RunnerEnv> = {}) {
  const env = testEnv(services, overrides);
  const log = memoryLog();
  const ctx: RunnerContext = {
    db: services.db,
    redis: services.redis,
    env,
    gpus: new GpuSlots(env.gpus),
    active: new Map<string, ActiveRun>(),
    log,
    childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH },
  };
  return { ctx, log };
}

/**
 * A run as the web creates it: a queued Run row with the frozen spec and its `queued` status
 * event as seq 1, in Postgres and in the run's stream.
 */
export async function createQueuedRun(
  services: TestServices,
  spec: unknown,
  fields: { gpus?: number; status?: "queued" | "running" | "cancelled"; runnerId?: string; heartbeatAt?: Date; startedAt?: Date; pid?: number } = {},
): Promise<string> {
  const now = new Date();
  const queued: StatusEvent = { seq: 1, ts: now.getTime(), type: "status", state: "queued" };
  const run = await services.db.run.create({
    data: {
      name: uniqueId("runner-test"),
      spec: spec as object,
      specVersion: 1,
      seed: 1,
      lastSeq: 1,
      status: fields.status ?? "queued",
      gpus: fields.gpus ?? 0,
      runnerId: fields.runnerId ?? null,
      heartbeatAt: fields.heartbeatAt ?? null,
      startedAt: fields.startedAt ?? null,
      pid: fields.pid ?? null,
      events: { create: { seq: 1, type: "status", ts: now, payload: queued } },
    },
  });
  services.runIds.push(run.id);
  await appendToStream(services.redis, run.id, [queued]);
  return run.id;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stream entry ids of a run, in order. */
export async function streamIds(redis: Redis, runId: string): Promise<string[]> {
  const entries = await redis.xrange(runEventStreamKey(runId), "-", "+");
  return entries.map(([id]) => id);
}
