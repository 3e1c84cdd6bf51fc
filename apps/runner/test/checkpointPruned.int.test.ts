import { existsSync } from "node:fs";
import { DEMO_SPEC_INPUT, RunSpec, type RunEvent } from "@troupe/contracts";
import { listEventsAfter } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEventLine } from "../src/ingest/eventIngest";
import { runJob } from "../src/run/runJob";
import { RUNTIME_PYTHON, runtimeUnavailable } from "./helpers/realRuntime";
import { createQueuedRun, openServices, testContext, type TestServices } from "./helpers/services";

/** `trainer.keepCheckpoints` deletions reach the database as `checkpoint_pruned` events (real runtime). */
const python = RUNTIME_PYTHON;
const unavailable = runtimeUnavailable();

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

describe("checkpoint_pruned events", () => {
  it("the ingest accepts the contract's event and refuses one without its fields", () => {
    const line = { seq: 9, ts: 1, type: "checkpoint_pruned", step: 2, path: "/w/checkpoints/step-2", keepCheckpoints: 1 };
    expect(parseEventLine(JSON.stringify(line))).toEqual({ ok: true, value: line });
    expect(parseEventLine(JSON.stringify({ ...line, keepCheckpoints: undefined }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^keepCheckpoints/) });
  });

  const title = "a run with keepCheckpoints=1 stores one checkpoint_pruned event per deleted step, after its checkpoint";
  it.skipIf(unavailable !== null)(unavailable ? `${title} — SKIPPED: ${unavailable}` : title, { timeout: 300_000 }, async () => {
    const { ctx } = testContext(services, { python });
    ctx.childEnv = { HF_HUB_OFFLINE: "1" };
    const spec = RunSpec.parse({
      ...DEMO_SPEC_INPUT,
      trainer: { ...DEMO_SPEC_INPUT.trainer, steps: 3, checkpointEvery: 1, keepCheckpoints: 1, cpuThreads: 1, promptsPerStep: 2 },
    });
    const runId = await createQueuedRun(services, spec);
    expect(await runJob(ctx, runId)).toEqual({ kind: "finished", status: "succeeded" });
    const events = await listEventsAfter(services.db, runId, 0, 10_000);
    const saved = events.filter((e): e is Extract<RunEvent, { type: "checkpoint" }> => e.type === "checkpoint");
    const pruned = events.filter((e): e is Extract<RunEvent, { type: "checkpoint_pruned" }> => e.type === "checkpoint_pruned");
    expect(saved.map((e) => e.step)).toEqual([1, 2, 3]);
    expect(pruned.map((e) => [e.step, e.keepCheckpoints, e.path.endsWith(`step-${e.step}`)])).toEqual([
      [1, 1, true],
      [2, 1, true],
    ]);
    for (const p of pruned) expect(p.seq).toBeGreaterThan(saved.find((s) => s.step === p.step + 1)!.seq);
    expect(existsSync(pruned[0]!.path)).toBe(false);
  });
});
