import { QUEUES } from "@troupe/contracts";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryLog } from "../src/log";
import { startRunner, type Runner } from "../src/runner";
import { createQueuedRun, FAKE_RUNTIME_PATH, openServices, serviceUrls, testEnv, uniqueId, waitFor, type TestServices } from "./helpers/services";

let services: TestServices;
let queueConnection: Redis;
let queue: Queue;
// Our own BullMQ prefix: the real queue name, but never another process's jobs.
const prefix = uniqueId("troupe-test-bull");

beforeAll(() => {
  services = openServices();
  queueConnection = new Redis(serviceUrls().redisUrl, { maxRetriesPerRequest: null });
  queue = new Queue(QUEUES.runs.name, { connection: queueConnection, prefix });
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await queueConnection.quit();
  await services.close();
});

const enqueue = (runId: string) => queue.add("run", QUEUES.runs.jobs.run.parse({ runId }), { jobId: runId });

describe("the BullMQ worker", () => {
  let runner: Runner | null = null;
  afterAll(async () => {
    await runner?.shutdown("test end");
  });

  it("takes a run from the queue and runs it to the end", async () => {
    const log = memoryLog();
    runner = await startRunner(testEnv(services), { log, queuePrefix: prefix, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH } });
    const runId = await createQueuedRun(services, { fixture: { mode: "succeed", steps: 2 } });
    await enqueue(runId);
    const run = await waitFor("the run to succeed", async () => {
      const r = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
      return r.status === "succeeded" ? r : null;
    });
    expect(run.lastStep).toBe(2);
    const job = await waitFor("the job to complete", async () => ((await queue.getJob(runId))?.returnvalue ? queue.getJob(runId) : null));
    expect(job?.returnvalue).toEqual({ kind: "finished", status: "succeeded" });
  });

  it("on shutdown, stops taking jobs and SIGTERMs its runs, which end at their step", async () => {
    const log = memoryLog();
    const env = testEnv(services);
    await runner?.shutdown("next test");
    runner = await startRunner(env, { log, queuePrefix: prefix, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH } });
    const runId = await createQueuedRun(services, { fixture: { mode: "forever", stepMs: 50 } });
    await enqueue(runId);
    await waitFor("the run's first metric", () => services.db.metricPoint.count({ where: { runId } }));

    const stopping = runner;
    runner = null;
    await stopping.shutdown("SIGTERM");

    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: "cancelled", error: `Stopped because runner ${env.runnerId} shut down.` });
    expect(log.lines).toEqual(expect.arrayContaining([expect.stringMatching(/shutting down \(SIGTERM\).*1 running run/), "INFO runner stopped"]));

    // A job enqueued now waits for the next runner.
    const later = await createQueuedRun(services, { fixture: { mode: "succeed", steps: 1 } });
    await enqueue(later);
    await new Promise((r) => setTimeout(r, 300));
    expect((await services.db.run.findUniqueOrThrow({ where: { id: later } })).status).toBe("queued");
    runner = await startRunner(env, { log, queuePrefix: prefix, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH } });
    await waitFor("the next runner to run it", async () => (await services.db.run.findUniqueOrThrow({ where: { id: later } })).status === "succeeded");
  });
});
