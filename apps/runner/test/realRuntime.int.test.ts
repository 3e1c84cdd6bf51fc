import { DEMO_SPEC_INPUT, RunSpec } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runJob } from "../src/run/runJob";
import { RUNTIME_PYTHON, runtimeUnavailable } from "./helpers/realRuntime";
import { createQueuedRun, openServices, testContext, type TestServices } from "./helpers/services";

/** The real runtime, from the repo's venv; outside CI the test is skipped, saying why, when it cannot be imported. */
const python = RUNTIME_PYTHON;
const unavailable = runtimeUnavailable();

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

describe("the real runtime", () => {
  const title = "runs the demo spec for 3 steps: succeeded, with reward and memory stored";
  it.skipIf(unavailable !== null)(unavailable ? `${title} — SKIPPED: ${unavailable}` : title, { timeout: 300_000 }, async () => {
    const { ctx } = testContext(services, { python });
    ctx.childEnv = { HF_HUB_OFFLINE: "1" }; // the real `troupe`, not the stand-in
    const spec = RunSpec.parse({ ...DEMO_SPEC_INPUT, trainer: { ...DEMO_SPEC_INPUT.trainer, steps: 3 } });
    const runId = await createQueuedRun(services, spec);

    const result = await runJob(ctx, runId);

    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect({ result, error: run.error, tail: run.status === "succeeded" ? "" : run.logTail }).toEqual({ result: { kind: "finished", status: "succeeded" }, error: null, tail: "" });
    expect(run.lastStep).toBe(3);
    const reward = await services.db.metricPoint.findMany({ where: { runId, name: "reward/mean" }, orderBy: { step: "asc" } });
    expect(reward.map((p) => p.step)).toEqual([1, 2, 3]);
    expect(await services.db.memorySample.count({ where: { runId } })).toBeGreaterThan(0);
    const statuses = await services.db.runEvent.findMany({ where: { runId, type: "status" }, orderBy: { seq: "asc" } });
    expect(statuses.map((e) => (e.payload as { state: string }).state)).toEqual(["queued", "running", "succeeded"]);
  });

  // Sharded over 2 CPU ranks (fsdp2, gloo), as the UI, REST and CLI launch it: the runner starts one
  // `python -m troupe run`, which launches and supervises its ranks; every event arrives once, from rank 0.
  const ranksTitle = "runs the demo sharded over 2 CPU processes: succeeded, each step stored once, setup log names the backend";
  it.skipIf(unavailable !== null)(unavailable ? `${ranksTitle} — SKIPPED: ${unavailable}` : ranksTitle, { timeout: 600_000 }, async () => {
    const { ctx } = testContext(services, { python });
    ctx.childEnv = { HF_HUB_OFFLINE: "1" };
    const [actor] = DEMO_SPEC_INPUT.actors;
    const spec = RunSpec.parse({
      ...DEMO_SPEC_INPUT,
      actors: [{ ...actor!, training: { ...actor!.training, backend: "fsdp2" }, placement: { processes: 2 } }],
      trainer: { ...DEMO_SPEC_INPUT.trainer, steps: 3, promptsPerStep: 2 },
    });
    const runId = await createQueuedRun(services, spec);

    const result = await runJob(ctx, runId);

    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect({ result, error: run.error }).toEqual({ result: { kind: "finished", status: "succeeded" }, error: null });
    const reward = await services.db.metricPoint.findMany({ where: { runId, name: "reward/mean" }, orderBy: { step: "asc" } });
    expect(reward.map((p) => p.step)).toEqual([1, 2, 3]);
    const logs = await services.db.runEvent.findMany({ where: { runId, type: "log" }, orderBy: { seq: "asc" } });
    const messages = logs.map((e) => (e.payload as { message: string }).message);
    expect(messages.some((m) => m.includes("launching 2 ranks"))).toBe(true);
    expect(messages.some((m) => m.includes("backend fsdp2, fp32, world size 2"))).toBe(true);
    const seqs = (await services.db.runEvent.findMany({ where: { runId }, orderBy: { seq: "asc" }, select: { seq: true } })).map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});
