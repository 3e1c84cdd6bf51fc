import { readFileSync } from "node:fs";
import { join } from "node:path";
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
    runner = await startRunner(testEnv(services), { log, queuePrefix: prefix, reconcileQueue: false, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH } });
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

  const statesOf = async (runId: string) =>
    (await services.db.runEvent.findMany({ where: { runId, type: "status" }, orderBy: { seq: "asc" } })).map((e) => (e.payload as { state: string }).state);

  it("on shutdown, stops each run after its step with a checkpoint and requeues it; the next runner resumes it from that step", async () => {
    const log = memoryLog();
    const env = testEnv(services);
    await runner?.shutdown("next test");
    runner = await startRunner(env, { log, queuePrefix: prefix, reconcileQueue: false, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH } });
    const total = 30;
    const runId = await createQueuedRun(services, { fixture: { mode: "succeed", steps: total, stepMs: 100 } });
    await enqueue(runId);
    await waitFor("the run's third step", async () => ((await services.db.run.findUniqueOrThrow({ where: { id: runId } })).lastStep ?? 0) >= 3);

    const stopping = runner;
    runner = null;
    await stopping.shutdown("SIGTERM");

    const handedBack = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(handedBack).toMatchObject({ status: "queued", error: null, finishedAt: null });
    const step = handedBack.resumeStep!;
    expect(step).toBeGreaterThanOrEqual(3);
    expect(step).toBeLessThan(total);
    expect(handedBack.lastStep).toBe(step);
    expect(log.lines).toEqual(expect.arrayContaining([expect.stringMatching(/shutting down \(SIGTERM\).*1 running run/), "INFO runner stopped"]));

    // A job enqueued now waits for the next runner, like the handed-back run.
    const later = await createQueuedRun(services, { fixture: { mode: "succeed", steps: 1 } });
    await enqueue(later);
    await new Promise((r) => setTimeout(r, 300));
    expect((await services.db.run.findUniqueOrThrow({ where: { id: later } })).status).toBe("queued");

    runner = await startRunner(testEnv(services), { log, queuePrefix: prefix, reconcileQueue: false, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH } });
    await waitFor("the next runner to finish both", async () => {
      const rows = await services.db.run.findMany({ where: { id: { in: [runId, later] } } });
      return rows.every((r) => r.status === "succeeded");
    });
    const resumed = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect({ attempt: resumed.attempt, lastStep: resumed.lastStep, error: resumed.error }).toEqual({ attempt: 2, lastStep: total, error: null });
    // Every step's metric exactly once, across the two attempts; the page never saw the run end.
    const metricSteps = (await services.db.runEvent.findMany({ where: { runId, type: "metric" }, orderBy: { seq: "asc" } })).map((e) => (e.payload as { step: number }).step);
    expect(metricSteps).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(await statesOf(runId)).toEqual(["queued", "running", "queued", "running", "succeeded"]);
    const invocation = JSON.parse(readFileSync(join(testEnv(services).workDir, runId, "invocation.json"), "utf8")) as { argv: string[] };
    expect(invocation.argv.slice(-2)).toEqual(["--resume", join(testEnv(services).workDir, runId, "checkpoints", `step-${step}`)]);
  });

  it("on shutdown, a run that does not stop within TROUPE_SHUTDOWN_GRACE_MS is cancelled at its step (the fallback)", async () => {
    const log = memoryLog();
    const env = testEnv(services, { shutdownGraceMs: 500 });
    await runner?.shutdown("next test");
    runner = await startRunner(env, { log, queuePrefix: prefix, reconcileQueue: false, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH } });
    const runId = await createQueuedRun(services, { fixture: { mode: "forever", stepMs: 50, ignoreStopAfterStep: true } });
    await enqueue(runId);
    await waitFor("the run's first metric", () => services.db.metricPoint.count({ where: { runId } }));

    const stopping = runner;
    runner = null;
    await stopping.shutdown("SIGTERM");

    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: "cancelled", error: `Stopped because runner ${env.runnerId} shut down.` });
    expect(log.lines).toEqual(expect.arrayContaining([expect.stringMatching(/cancelling 1 running run\(s\) \(not stopped within TROUPE_SHUTDOWN_GRACE_MS=500\)/)]));
  });
});
