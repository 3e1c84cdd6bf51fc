import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { QUEUES } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runJobId } from "@troupe/contracts";
import { ensureRunJob } from "../src/queue/runJobs";
import { runJob } from "../src/run/runJob";
import { createQueuedRun, openServices, serviceUrls, testContext, uniqueId, waitFor, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

describe("resuming", () => {
  it("starts from the newest checkpoint on disk when Postgres recorded an older one", async () => {
    const { ctx, log } = testContext(services);
    const runId = await createQueuedRun(services, { fixture: { mode: "succeed", steps: 8 } });
    // An earlier attempt stored steps 1-2 and the checkpoint of step 2; its step-5 checkpoint reached the disk only.
    await storeEvents(services.db, runId, [1, 2].map((step) => ({ seq: step + 1, ts: Date.now(), type: "metric" as const, step, values: { loss: step } })));
    await services.db.run.update({ where: { id: runId }, data: { resumeStep: 2, attempt: 1 } });
    for (const step of [2, 5]) {
      const folder = join(ctx.env.workDir, runId, "checkpoints", `step-${step}`);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, "trainer_state.json"), "{}");
    }

    expect(await runJob(ctx, runId)).toEqual({ kind: "finished", status: "succeeded" });

    const invocation = JSON.parse(readFileSync(join(ctx.env.workDir, runId, "invocation.json"), "utf8")) as { argv: string[] };
    expect(invocation.argv.slice(-2)).toEqual(["--resume", join(ctx.env.workDir, runId, "checkpoints", "step-5")]);
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect({ status: run.status, resumeStep: run.resumeStep, lastStep: run.lastStep }).toEqual({ status: "succeeded", resumeStep: 5, lastStep: 8 });
    const steps = (await services.db.metricPoint.findMany({ where: { runId, name: "loss" }, orderBy: { step: "asc" } })).map((p) => p.step);
    expect(steps).toEqual([1, 2, 6, 7, 8]); // 3-5 were trained but never stored: a gap, not a second copy
    expect(log.lines).toEqual(expect.arrayContaining([expect.stringContaining("resuming from the checkpoint of step 5 found on disk (Postgres recorded step 2)")]));
  });
});

describe("a queued run's job", () => {
  it("is added when missing, left alone when waiting, and replaced when it finished while the run stayed queued", async () => {
    const connection = new Redis(serviceUrls().redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUES.runs.name, { connection, prefix: uniqueId("troupe-test-bull") });
    try {
      const run = { id: uniqueId("run"), attempt: 0, gpus: 0, priority: 0 };
      expect(await ensureRunJob(queue, run)).toBe("added");
      expect(await ensureRunJob(queue, run)).toBe("present");
      expect(await queue.getJobState(run.id)).toBe("prioritized");
      const resumed = { ...run, attempt: 2 };
      expect(runJobId(resumed.id, resumed.attempt)).toBe(`${run.id}-attempt-3`);
      expect(await ensureRunJob(queue, resumed)).toBe("added");

      // A job processed (e.g. its claim met a database outage) while the run stayed queued.
      const workerConnection = new Redis(serviceUrls().redisUrl, { maxRetriesPerRequest: null });
      const worker = new Worker(QUEUES.runs.name, async () => "skipped", { connection: workerConnection, prefix: queue.opts.prefix! });
      try {
        await waitFor("the job to complete", async () => (await queue.getJobState(run.id)) === "completed");
      } finally {
        await worker.close();
        await workerConnection.quit();
      }
      expect(await ensureRunJob(queue, run)).toBe("replaced");
      expect(await queue.getJobState(run.id)).toBe("prioritized");
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      await connection.quit();
    }
  });

  it("of a run handed back by a deploy is taken before the new runs of its priority, after higher priorities", async () => {
    const connection = new Redis(serviceUrls().redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUES.runs.name, { connection, prefix: uniqueId("troupe-test-bull") });
    const workerConnection = new Redis(serviceUrls().redisUrl, { maxRetriesPerRequest: null });
    try {
      // Queued in this order: a new run, an urgent one, then the run a runner's SIGTERM handed back.
      const fresh = { id: uniqueId("fresh"), attempt: 0, gpus: 0, priority: 0 };
      const urgent = { id: uniqueId("urgent"), attempt: 0, gpus: 0, priority: 50 };
      const handedBack = { id: uniqueId("handed-back"), attempt: 1, gpus: 0, priority: 0 };
      for (const run of [fresh, urgent, handedBack]) await ensureRunJob(queue, run);
      const taken: string[] = [];
      const worker = new Worker(QUEUES.runs.name, async (job) => void taken.push((job.data as { runId: string }).runId), {
        connection: workerConnection,
        prefix: queue.opts.prefix!,
        concurrency: 1,
      });
      try {
        await waitFor("every job taken", async () => taken.length === 3);
      } finally {
        await worker.close();
      }
      expect(taken).toEqual([urgent.id, handedBack.id, fresh.id]);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      await connection.quit();
      await workerConnection.quit();
    }
  });
});
