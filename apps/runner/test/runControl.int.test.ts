import { DEMO_SPEC_INPUT, RunSpec, type RuntimeControlCommandName } from "@troupe/contracts";
import { rewindRunAfterStep, transitionRun } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControlSubscriber } from "../src/control/controlSubscriber";
import { runJob } from "../src/run/runJob";
import { RUNTIME_PYTHON, runtimeUnavailable } from "./helpers/realRuntime";
import { createQueuedRun, openServices, serviceUrls, testContext, waitFor, type TestServices } from "./helpers/services";

/** Pause, resume, stop-after-step and resume-from-checkpoint through Redis pub/sub, with the real runtime. */
const python = RUNTIME_PYTHON;
const unavailable = runtimeUnavailable();

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("run control with the real runtime", () => {
  const title = "pause holds the step, resume continues, stop-after-step ends `stopped` with a checkpoint, and a new attempt resumes from it";
  it.skipIf(unavailable !== null)(unavailable ? `${title} — SKIPPED: ${unavailable}` : title, { timeout: 400_000 }, async () => {
    const { ctx } = testContext(services, { python });
    ctx.childEnv = { HF_HUB_OFFLINE: "1" };
    const control = await startControlSubscriber(serviceUrls().redisUrl, ctx.active, ctx.log);
    // What the web does: store the command on the row, then wake the runner.
    const send = async (action: RuntimeControlCommandName) => {
      await services.db.run.update({ where: { id: runId }, data: { controlRequest: action, controlRequestedAt: new Date() } });
      await services.redis.publish(control.channel, JSON.stringify({ runId, action }));
    };
    const row = () => services.db.run.findUniqueOrThrow({ where: { id: runId } });

    // Each command must arrive while the run still trains: 40 steps of 2 prompts (~0.15 s each on a quiet machine)
    // could all run before stop_after_step landed. 60 steps of 8 prompts (~0.6 s each) leave room.
    const total = 60;
    const spec = RunSpec.parse({
      ...DEMO_SPEC_INPUT,
      trainer: { ...DEMO_SPEC_INPUT.trainer, steps: total, checkpointEvery: 0, cpuThreads: 1, promptsPerStep: 8 },
    });
    const runId = await createQueuedRun(services, spec);
    try {
      const first = runJob(ctx, runId);
      await waitFor("a first step", async () => ((await row()).lastStep ?? 0) >= 1, 120_000);
      await send("pause");
      await waitFor("status paused", async () => (await row()).status === "paused", 60_000);
      const heldAt = (await row()).lastStep!;
      await sleep(2_000);
      expect((await row()).lastStep).toBe(heldAt); // waiting, not training
      await send("resume");
      await waitFor("running again", async () => (await row()).status === "running" && ((await row()).lastStep ?? 0) > heldAt, 60_000);
      await send("stop_after_step");
      expect(await first).toEqual({ kind: "finished", status: "stopped" });
      const stopped = await row();
      expect(stopped.status).toBe("stopped");
      expect(stopped.lastStep!).toBeLessThan(total);
      const checkpoints = await services.db.runEvent.findMany({ where: { runId, type: "checkpoint" } });
      expect(checkpoints.map((e) => (e.payload as { step: number }).step)).toEqual([stopped.lastStep]);
      expect((checkpoints[0]!.payload as { sizeBytes: number }).sizeBytes).toBeGreaterThan(1000);

      // What the web's "Resume from checkpoint" does: forget later steps, queue a new attempt.
      const from = stopped.lastStep!;
      await rewindRunAfterStep(services.db, runId, from);
      await transitionRun(services.db, runId, { from: ["stopped"], to: "queued", message: `resume from step ${from}`, extra: { resumeStep: from } });
      expect(await runJob(ctx, runId)).toEqual({ kind: "finished", status: "succeeded" });

      const points = await services.db.metricPoint.findMany({ where: { runId, name: "reward/mean" }, orderBy: { step: "asc" } });
      expect(points.map((p) => p.step)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      const states = (await services.db.runEvent.findMany({ where: { runId, type: "status" }, orderBy: { seq: "asc" } })).map(
        (e) => (e.payload as { state: string }).state,
      );
      expect(states).toEqual(["queued", "running", "paused", "running", "stopped", "queued", "running", "succeeded"]);
      expect((await row()).attempt).toBe(2);
    } finally {
      await control.close();
    }
  });
});
