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
});
