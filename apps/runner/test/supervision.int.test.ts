import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultGpuCount, DEMO_SPEC_INPUT, RunSpec, type RunEvent } from "@troupe/contracts";
import { listEventsAfter } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControlSubscriber } from "../src/control/controlSubscriber";
import type { RunnerEnv } from "../src/env";
import { runJob } from "../src/run/runJob";
import { createQueuedRun, openServices, serviceUrls, streamIds, testContext, waitFor, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

const fixtureSpec = (fixture: Record<string, unknown>) => ({ specVersion: 1, name: "fixture", fixture });
const getRun = (runId: string) => services.db.run.findUniqueOrThrow({ where: { id: runId } });
const statusEvents = async (runId: string) =>
  (await listEventsAfter(services.db, runId, 0, 10_000)).filter((e): e is Extract<RunEvent, { type: "status" }> => e.type === "status");

/** Starts a long run and waits until its runtime has stored at least one metric. */
async function startLongRun(fixture: Record<string, unknown>, env: Partial<RunnerEnv> = {}) {
  const { ctx, log } = testContext(services, env);
  const runId = await createQueuedRun(services, fixtureSpec(fixture));
  const job = runJob(ctx, runId);
  await waitFor("the runtime's first metric", () => services.db.metricPoint.count({ where: { runId } }));
  return { ctx, log, runId, job };
}

describe("supervising the runtime process", () => {
  it("a child that emits events and exits 0 → succeeded, everything stored and streamed once", async () => {
    const { ctx, log } = testContext(services);
    const spec = fixtureSpec({ mode: "succeed", steps: 3 });
    const runId = await createQueuedRun(services, spec);

    expect(await runJob(ctx, runId)).toEqual({ kind: "finished", status: "succeeded" });

    const run = await getRun(runId);
    // seq 1 queued (web), 2 running (runner), 3..11 three steps of memory/episode/metric, 12 the runtime's status.
    expect(run).toMatchObject({ status: "succeeded", error: null, lastSeq: 12, lastStep: 3, attempt: 1, runnerId: ctx.env.runnerId });
    expect(run.finishedAt).toBeInstanceOf(Date);
    expect(run.logTail).toContain("step 3 done");
    const statuses = await statusEvents(runId);
    expect(statuses.map((e) => [e.seq, e.state])).toEqual([[1, "queued"], [2, "running"], [12, "succeeded"]]);
    expect(statuses[2]!.message).toBe("finished 3 steps"); // the runtime's own event, not a second one
    expect(await services.db.metricPoint.count({ where: { runId } })).toBe(6);
    expect(await services.db.episode.count({ where: { runId } })).toBe(3);
    expect(await services.db.memorySample.count({ where: { runId } })).toBe(3);
    expect(await streamIds(services.redis, runId)).toEqual(Array.from({ length: 12 }, (_, i) => `${i + 1}-0`));

    const lines = await services.db.logLine.findMany({ where: { runId }, orderBy: { lineNo: "asc" } });
    expect(lines.map((l) => l.lineNo)).toEqual(lines.map((_, i) => i + 1));
    expect(lines.filter((l) => l.stream === "stdout").map((l) => l.text)).toEqual(["step 1 starting", "step 2 starting", "step 3 starting"]);
    expect(lines.filter((l) => l.stream === "stderr").map((l) => l.text)).toEqual(["step 1 done", "step 2 done", "step 3 done"]);

    const workDir = join(ctx.env.workDir, runId);
    expect(run.workDir).toBe(workDir);
    expect(JSON.parse(readFileSync(join(workDir, "spec.json"), "utf8"))).toEqual(spec);
    const invocation = JSON.parse(readFileSync(join(workDir, "invocation.json"), "utf8"));
    expect(invocation.argv).toEqual(["run", join(workDir, "spec.json"), "--events-fd", "3", "--seq-start", "3", "--work-dir", workDir, "--control-fd", "4"]);
    expect(invocation.cwd).toBe(workDir);
    expect(invocation.env).toMatchObject({ PYTHONUNBUFFERED: "1", CUDA_VISIBLE_DEVICES: "", DATABASE_URL: null, REDIS_URL: null });
    expect(log.lines).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`run=${runId} queued → running`)), expect.stringMatching(new RegExp(`run=${runId} running → succeeded`))]));
  });

  it("a child that crashes after printing → failed with exit code and log tail, status event written by the runner", async () => {
    const { ctx } = testContext(services);
    const runId = await createQueuedRun(services, fixtureSpec({ mode: "crash", steps: 2, exitCode: 7 }));

    expect(await runJob(ctx, runId)).toEqual({ kind: "finished", status: "failed" });

    const run = await getRun(runId);
    expect(run.status).toBe("failed");
    expect(run.error).toContain("The runtime exited with code 7 without reporting a final status.");
    expect(run.error).toContain("RuntimeError: fixture crash on purpose");
    expect(run.logTail).toContain("step 2 done");
    expect(run.logTail).toContain("RuntimeError: fixture crash on purpose");
    // 1 queued, 2 running, 3..8 two steps, 9 = the runner's `failed` (last stored + 1).
    const statuses = await statusEvents(runId);
    expect(statuses.map((e) => [e.seq, e.state])).toEqual([[1, "queued"], [2, "running"], [9, "failed"]]);
    expect(run.lastSeq).toBe(9);
    expect((await streamIds(services.redis, runId)).at(-1)).toBe("9-0");
  });

  it("a child that reports its own failure → failed with its error event's message", async () => {
    const { ctx } = testContext(services);
    const runId = await createQueuedRun(services, fixtureSpec({ mode: "fail", steps: 1 }));
    await runJob(ctx, runId);
    const run = await getRun(runId);
    expect(run).toMatchObject({ status: "failed", error: "spec field `rewards.0`: reward function raised ValueError" });
    expect((await statusEvents(runId)).filter((e) => e.state === "failed")).toHaveLength(1);
  });

  it("malformed event lines become warnings in the log; the run goes on", async () => {
    const { ctx } = testContext(services);
    const runId = await createQueuedRun(services, fixtureSpec({ mode: "malformed", steps: 2 }));
    await runJob(ctx, runId);
    const run = await getRun(runId);
    expect(run.status).toBe("succeeded");
    const warnings = await services.db.logLine.findMany({ where: { runId, stream: "runner", text: { contains: "malformed" } } });
    expect(warnings.map((w) => w.text)).toEqual([
      expect.stringContaining("(not JSON: "),
      expect.stringContaining("(step: "),
      expect.stringContaining("(not JSON: "),
      expect.stringContaining("(step: "),
    ]);
    expect(await services.db.metricPoint.count({ where: { runId } })).toBe(4);
  });

  it("cancel over pub/sub → SIGTERM → the runtime finishes its step and the run is cancelled", async () => {
    // A slow heartbeat, so only the pub/sub message can deliver the cancel.
    const { ctx, runId, job } = await startLongRun({ mode: "forever", stepMs: 100 }, { heartbeatMs: 30_000 });
    const control = await startControlSubscriber(serviceUrls().redisUrl, ctx.active, ctx.log);
    try {
      await services.db.run.update({ where: { id: runId }, data: { cancelRequestedAt: new Date() } });
      await services.redis.publish(control.channel, JSON.stringify({ runId, action: "cancel" }));
      expect(await job).toEqual({ kind: "finished", status: "cancelled" });
    } finally {
      await control.close();
    }
    const run = await getRun(runId);
    expect(run).toMatchObject({ status: "cancelled", error: "Cancelled on request." });
    expect(run.logTail).toMatch(/SIGTERM received; stopping after step \d+/);
    const last = (await statusEvents(runId)).at(-1)!;
    expect(last.message).toMatch(/^cancelled after step \d+$/); // the runtime's own event
  });

  it("a child that ignores SIGTERM is SIGKILLed after the grace period → cancelled", async () => {
    const { runId, job, ctx } = await startLongRun({ mode: "ignore-term", stepMs: 50 }, { cancelGraceMs: 700 });
    const cancelledAt = Date.now();
    await services.db.run.update({ where: { id: runId }, data: { cancelRequestedAt: new Date() } });
    ctx.active.get(runId)!.requestStop("cancel");
    expect(await job).toEqual({ kind: "finished", status: "cancelled" });
    expect(Date.now() - cancelledAt).toBeGreaterThanOrEqual(700);
    const run = await getRun(runId);
    expect(run.error).toBe("Cancelled on request; the runtime was killed with SIGKILL after not stopping within 700 ms of SIGTERM without reporting a final status.");
    const last = (await statusEvents(runId)).at(-1)!;
    expect(last).toMatchObject({ state: "cancelled", seq: run.lastSeq });
  });

  it("the heartbeat notices Run.cancelRequestedAt when no pub/sub message comes", async () => {
    const { runId, job } = await startLongRun({ mode: "forever", stepMs: 50 }, { heartbeatMs: 150 });
    await services.db.run.update({ where: { id: runId }, data: { cancelRequestedAt: new Date() } });
    expect(await job).toEqual({ kind: "finished", status: "cancelled" });
    const run = await getRun(runId);
    expect(run.heartbeatAt!.getTime()).toBeGreaterThan(run.startedAt!.getTime());
  });

  it("a runtime that cannot be started → failed, saying why", async () => {
    const { ctx } = testContext(services, { python: join(services.workRoot, "no-such-python") });
    const runId = await createQueuedRun(services, fixtureSpec({}));
    await runJob(ctx, runId);
    const run = await getRun(runId);
    expect(run.status).toBe("failed");
    expect(run.error).toMatch(/could not be started \(spawn .*no-such-python ENOENT\)/);
  });

  it("does not hang when something the runtime started keeps its pipes open", async () => {
    const { ctx } = testContext(services);
    const runId = await createQueuedRun(services, fixtureSpec({ mode: "grandchild", steps: 1 }));
    const started = Date.now();
    await runJob(ctx, runId);
    expect(Date.now() - started).toBeLessThan(20_000);
    const run = await getRun(runId);
    expect(run.status).toBe("succeeded");
    expect(run.logTail).toContain("its output pipes were still open and were cut");
  });

  it("a run needing more GPUs than the host has is failed without being claimed", async () => {
    const { ctx } = testContext(services, { gpus: 1 });
    const runId = await createQueuedRun(services, fixtureSpec({}), { gpus: 2 });
    expect(await runJob(ctx, runId)).toEqual({ kind: "finished", status: "failed" });
    const run = await getRun(runId);
    expect(run).toMatchObject({ status: "failed", attempt: 0, runnerId: null });
    expect(run.error).toMatch(/needs 2 GPU\(s\) but this runner has 1/);
  });

  it("gives a GPU run only its own GPUs", async () => {
    const { ctx } = testContext(services, { gpus: 2 });
    const runId = await createQueuedRun(services, fixtureSpec({ mode: "succeed", steps: 1 }), { gpus: 1 });
    await runJob(ctx, runId);
    const invocation = JSON.parse(readFileSync(join(ctx.env.workDir, runId, "invocation.json"), "utf8"));
    expect(invocation.env.CUDA_VISIBLE_DEVICES).toBe("0");
    expect(ctx.gpus.freeCount).toBe(2);
  });

  // Issue #25: a spec with trainer.device "auto" and no placement claimed 0 GPUs and trained on the CPU of a
  // GPU host; placement.gpus [1] on a 2-GPU runner was refused. The Run row's `gpus` is what the web stores
  // (contracts defaultGpuCount); TROUPE_RUNNER_GPUS=2 (testContext's `gpus`) simulates the 2-GPU runner.
  const gpuSpec = (actors: Record<string, unknown>[], device = "auto") =>
    RunSpec.parse({ ...DEMO_SPEC_INPUT, actors, trainer: { ...DEMO_SPEC_INPUT.trainer, device } });
  const withFixture = (spec: RunSpec) => ({ ...spec, fixture: { mode: "succeed", steps: 1 } });
  const [demoActor] = DEMO_SPEC_INPUT.actors;
  const invocationOf = (ctx: { env: { workDir: string } }, runId: string) =>
    JSON.parse(readFileSync(join(ctx.env.workDir, runId, "invocation.json"), "utf8")) as { env: Record<string, string> };

  it("an unplaced auto spec on a 2-GPU runner claims one GPU per model, and the runtime is handed them", async () => {
    const { ctx } = testContext(services, { gpus: 2 });
    const spec = gpuSpec([demoActor!, { ...demoActor!, name: "rival" }]);
    const runId = await createQueuedRun(services, withFixture(spec), { gpus: defaultGpuCount(spec) });
    expect(defaultGpuCount(spec)).toBe(2);
    expect(await runJob(ctx, runId)).toEqual({ kind: "finished", status: "succeeded" });
    const { env } = invocationOf(ctx, runId);
    expect({ cuda: env.CUDA_VISIBLE_DEVICES, ids: env.TROUPE_GPU_IDS }).toEqual({ cuda: "0,1", ids: "0,1" });
    expect((await getRun(runId)).gpuIds).toEqual([0, 1]);
    expect(ctx.gpus.freeCount).toBe(2);
  });

  it("an unplaced auto spec takes what a smaller runner has, and a CPU-only runner runs it on its CPU", async () => {
    const spec = gpuSpec([demoActor!, { ...demoActor!, name: "rival" }]);
    const one = testContext(services, { gpus: 1 }).ctx;
    const onOne = await createQueuedRun(services, withFixture(spec), { gpus: defaultGpuCount(spec) });
    expect(await runJob(one, onOne)).toEqual({ kind: "finished", status: "succeeded" });
    expect(invocationOf(one, onOne).env.CUDA_VISIBLE_DEVICES).toBe("0");
    const cpu = testContext(services, { gpus: 0 }).ctx;
    const onCpu = await createQueuedRun(services, withFixture(spec), { gpus: defaultGpuCount(spec) });
    expect(await runJob(cpu, onCpu)).toEqual({ kind: "finished", status: "succeeded" });
    expect(invocationOf(cpu, onCpu).env.CUDA_VISIBLE_DEVICES).toBe("");
    expect((await getRun(onCpu)).gpuIds).toEqual([]);
  });

  it("placement.gpus [1] on a 2-GPU runner gets the runner's GPU 1 (seen by the runtime as its only device)", async () => {
    const { ctx } = testContext(services, { gpus: 2 });
    const spec = gpuSpec([{ ...demoActor!, placement: { gpus: [1] } }]);
    const runId = await createQueuedRun(services, withFixture(spec), { gpus: defaultGpuCount(spec) });
    expect(await runJob(ctx, runId)).toEqual({ kind: "finished", status: "succeeded" });
    const { env } = invocationOf(ctx, runId);
    expect({ cuda: env.CUDA_VISIBLE_DEVICES, ids: env.TROUPE_GPU_IDS }).toEqual({ cuda: "1", ids: "1" });
    expect((await getRun(runId)).gpuIds).toEqual([1]);
  });

  it('a "cuda" spec on a runner without GPUs, or one placed on a GPU it lacks, fails unclaimed with the reason', async () => {
    const cpu = testContext(services, { gpus: 0 }).ctx;
    const cudaSpec = gpuSpec([demoActor!], "cuda");
    const cudaRun = await createQueuedRun(services, withFixture(cudaSpec), { gpus: defaultGpuCount(cudaSpec) });
    expect(await runJob(cpu, cudaRun)).toEqual({ kind: "finished", status: "failed" });
    expect((await getRun(cudaRun)).error).toMatch(/trainer.device is "cuda", but this runner has no GPUs/);
    const two = testContext(services, { gpus: 2 }).ctx;
    const placed = gpuSpec([{ ...demoActor!, placement: { gpus: [3] } }]);
    const placedRun = await createQueuedRun(services, withFixture(placed), { gpus: defaultGpuCount(placed) });
    expect(await runJob(two, placedRun)).toEqual({ kind: "finished", status: "failed" });
    expect(await getRun(placedRun)).toMatchObject({ status: "failed", runnerId: null });
    expect((await getRun(placedRun)).error).toMatch(/placed on GPU 3 .* this runner has 2 GPU\(s\) \(indices 0-1\)/);
  });
});

