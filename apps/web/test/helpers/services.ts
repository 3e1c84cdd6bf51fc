import { DEMO_SPEC_INPUT, QUEUES, runEventStreamKey, type RunEvent, type StatusEvent } from "@troupe/contracts";
import { appendToStream, createDb, storeEvents, type Db } from "@troupe/db";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { createCaller } from "../../src/server/api/root";
import type { Role } from "../../src/features/auth/lib/roles";
import type { TRPCContext } from "../../src/server/api/trpc";
import { uniqueId } from "./ids";
import { createTestUser, deleteTestUsers, tokenFor, type TestUser } from "./users";

/** Real Postgres and Redis from the environment; nothing of ours is mocked. */
export function serviceUrls(): { databaseUrl: string; redisUrl: string } {
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    throw new Error("web integration tests need DATABASE_URL (migrated with `npm run -w @troupe/db migrate`) and REDIS_URL");
  }
  return { databaseUrl, redisUrl };
}

export { uniqueId };

/**
 * Who `caller` acts as: an administrator (every procedure allows it), so tests of what a procedure
 * does are not about who may call it. No user row backs it; tests that need one (tokens, users)
 * use `services.user(role)`. Refusals are tested over all procedures in auth.procedures.int.test.ts.
 */
export const TEST_ADMIN: TRPCContext["auth"] = {
  user: { id: "vitest-admin", email: "vitest-admin@troupe.test", name: "vitest", role: "admin" },
  via: "session",
};

export interface TestServices {
  ctx: TRPCContext;
  db: Db;
  redis: Redis;
  /** A real BullMQ queue under a test-only prefix, so a runner on the same Redis never sees our jobs. */
  queue: Queue;
  /** tRPC as an administrator (TEST_ADMIN). */
  caller: ReturnType<typeof createCaller>;
  /** A real user with `role` and a caller acting as them; removed by `close`. */
  user(role: Role, label?: string): Promise<TestUser & { caller: ReturnType<typeof createCaller> }>;
  /** An API token of a new user with `role` (editor by default); removed by `close`. */
  apiToken(role?: Role, label?: string): Promise<{ token: string; tokenId: string; userId: string }>;
  /** Fresh connections for blocking reads or subscriptions, closed by `close`. */
  connection(): Redis;
  experimentIds: string[];
  runIds: string[];
  close(): Promise<void>;
}

export function openServices(): TestServices {
  const { databaseUrl, redisUrl } = serviceUrls();
  const db = createDb(databaseUrl);
  const redis = new Redis(redisUrl);
  const extra: Redis[] = [];
  const queue = new Queue(QUEUES.runs.name, {
    connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
    prefix: uniqueId("troupe-web-test"),
  });
  const ctx: TRPCContext = { db, redis, runQueue: queue, auth: TEST_ADMIN };
  const userIds: string[] = [];
  const experimentIds: string[] = [];
  const runIds: string[] = [];
  return {
    ctx,
    db,
    redis,
    queue,
    caller: createCaller(ctx),
    async user(role, label) {
      const user = await createTestUser(db, role, label);
      userIds.push(user.id);
      return { ...user, caller: createCaller({ ...ctx, auth: user.auth }) };
    },
    async apiToken(role = "editor", label = "vitest-token") {
      const user = await createTestUser(db, role, label);
      userIds.push(user.id);
      return { ...(await tokenFor(db, user.id, label)), userId: user.id };
    },
    connection() {
      const c = new Redis(redisUrl, { maxRetriesPerRequest: null });
      extra.push(c);
      return c;
    },
    experimentIds,
    runIds,
    async close() {
      const created = await db.run.findMany({
        where: { OR: [{ id: { in: runIds } }, { experimentId: { in: experimentIds } }] },
        select: { id: true },
      });
      const ids = created.map((r) => r.id);
      if (ids.length > 0) {
        await db.run.deleteMany({ where: { id: { in: ids } } });
        await redis.del(...ids.map(runEventStreamKey));
      }
      await db.experiment.deleteMany({ where: { id: { in: experimentIds } } });
      await deleteTestUsers(db, userIds);
      await queue.obliterate({ force: true });
      await queue.close();
      await Promise.all(extra.map((c) => c.quit().catch(() => c.disconnect())));
      await redis.quit();
      await db.$disconnect();
    },
  };
}

/** An experiment holding the demo spec (or another), removed by `close`. */
export async function createExperiment(services: TestServices, spec: unknown = DEMO_SPEC_INPUT): Promise<string> {
  const id = uniqueId("web-test-exp");
  await services.db.experiment.create({ data: { id, name: "web test experiment", spec: spec as object } });
  services.experimentIds.push(id);
  return id;
}

/** A run row with its seq-1 queued event stored (not enqueued): a bare run for feed tests. */
export async function createBareRun(services: TestServices): Promise<string> {
  const id = uniqueId("web-test-run");
  await services.db.run.create({
    data: { id, name: "web test run", spec: {}, specVersion: 1, seed: 0, status: "running" },
  });
  services.runIds.push(id);
  const queued: StatusEvent = { seq: 1, ts: Date.now(), type: "status", state: "queued" };
  await storeEvents(services.db, id, [queued]);
  await appendToStream(services.redis, id, [queued]);
  return id;
}

/** Metric events with consecutive seqs from `fromSeq` (step = seq), ending with `terminal` when given. */
export function metricEvents(fromSeq: number, toSeq: number, terminal?: StatusEvent["state"]): RunEvent[] {
  const events: RunEvent[] = [];
  for (let seq = fromSeq; seq <= toSeq; seq++) {
    const isLast = seq === toSeq;
    if (isLast && terminal) {
      events.push({ seq, ts: Date.now(), type: "status", state: terminal });
    } else {
      events.push({ seq, ts: Date.now(), type: "metric", step: seq, actor: "student", values: { "reward/mean": seq / 100 } });
    }
  }
  return events;
}
