import { DEMO_SPEC_INPUT, RunControlMessage, runControlChannel, type RunEvent } from "@troupe/contracts";
import { storeEvents, transitionRun } from "@troupe/db";
import { describe, expect, it } from "vitest";
import { useApiSession } from "./helpers/apiSession";
import { uniqueId } from "./helpers/services";

/**
 * REST pause / resume / stop and resume-from-checkpoint over HTTP against real Postgres and Redis;
 * every response is checked against the served OpenAPI document. A Redis subscriber on the control
 * channel plays the part of the runner's (the runner forwarding to the runtime is tested in apps/runner).
 */

const api = useApiSession("control-token");

async function launch(): Promise<string> {
  const r = await api.call("POST", "/runs", "/runs", {
    body: JSON.stringify({ ...DEMO_SPEC_INPUT, name: uniqueId("control-run") }),
    headers: { "content-type": "application/json" },
  });
  const id = (r.json as { id: string }).id;
  api.services.runIds.push(id);
  await api.server.queue.remove(id).catch(() => 0);
  return id;
}

/** A subscriber on a control channel: this install's (its Redis database index) unless told another index. */
function listen(runId: string, redisDb = api.services.redis.options.db ?? 0): { messages: RunControlMessage[]; ready: Promise<unknown>; close(): void } {
  const subscriber = api.services.connection();
  const messages: RunControlMessage[] = [];
  const channel = runControlChannel(redisDb);
  subscriber.on("message", (heardOn, message) => {
    if (heardOn !== channel) return;
    const parsed = RunControlMessage.parse(JSON.parse(message));
    if (parsed.runId === runId) messages.push(parsed);
  });
  return { messages, ready: subscriber.subscribe(channel), close: () => subscriber.disconnect() };
}

const metric = (seq: number, step: number, value: number): RunEvent => ({ seq, ts: 1_700_000_000_000 + seq, type: "metric", step, values: { "reward/mean": value } });

describe("pause, resume, stop over REST", () => {
  it("forwards each command for a run in the right state and answers 409 with the reason otherwise", async () => {
    const runId = await launch();
    const pausedTooEarly = await api.call("POST", `/runs/${runId}/pause`, "/runs/{id}/pause");
    expect(pausedTooEarly.status).toBe(409);
    expect((pausedTooEarly.json as { detail: string }).detail).toMatch(/is queued: only a running run can be paused/);

    await transitionRun(api.services.db, runId, { from: ["queued"], to: "running" });
    const runner = listen(runId);
    await runner.ready;
    try {
      const paused = await api.call("POST", `/runs/${runId}/pause`, "/runs/{id}/pause");
      expect(paused.status).toBe(200);
      expect(paused.json).toMatchObject({ outcome: "requested", run: { id: runId, status: "running" } });
      expect((await api.call("POST", `/runs/${runId}/resume`, "/runs/{id}/resume")).status).toBe(409); // running, not paused: no checkpoint either

      await transitionRun(api.services.db, runId, { from: ["running"], to: "paused" }); // what the runner does on the runtime's event
      const resumed = await api.call("POST", `/runs/${runId}/resume`, "/runs/{id}/resume");
      expect(resumed.json).toMatchObject({ outcome: "requested", run: { status: "paused" } });
      const stopped = await api.call("POST", `/runs/${runId}/stop`, "/runs/{id}/stop");
      expect(stopped.json).toMatchObject({ outcome: "requested" });
      await expect.poll(() => runner.messages.map((m) => m.action)).toEqual(["pause", "resume", "stop_after_step"]);
    } finally {
      runner.close();
    }
    expect((await api.call("POST", "/runs/no-such-run/stop", "/runs/{id}/stop")).status).toBe(404);
  });

  it("stores the command on the run for its runner, publishes it only on this install's channel, and needs no listener", async () => {
    const runId = await launch();
    await transitionRun(api.services.db, runId, { from: ["queued"], to: "running" });
    // Another install's runner on the same Redis server (another database index), and none of ours.
    const elsewhere = listen(runId, ((api.services.redis.options.db ?? 0) + 1) % 16);
    await elsewhere.ready;
    try {
      const before = Date.now();
      const paused = await api.call("POST", `/runs/${runId}/pause`, "/runs/{id}/pause");
      expect(paused.status).toBe(200);
      expect(paused.json).toMatchObject({ outcome: "requested", run: { status: "running" } });
      const row = await api.services.db.run.findUniqueOrThrow({ where: { id: runId } });
      expect(row.controlRequest).toBe("pause"); // what a runner that missed the message reads at its heartbeat
      expect(row.controlRequestedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
      const stopped = await api.call("POST", `/runs/${runId}/stop`, "/runs/{id}/stop");
      expect(stopped.status).toBe(200);
      expect((await api.services.db.run.findUniqueOrThrow({ where: { id: runId } })).controlRequest).toBe("stop_after_step"); // the latest wins
      await new Promise((r) => setTimeout(r, 200));
      expect(elsewhere.messages).toEqual([]);
    } finally {
      elsewhere.close();
    }
  });
});

describe("resume from checkpoint", () => {
  it("requeues a stopped run from its latest checkpoint and forgets what later steps stored", async () => {
    const runId = await launch();
    await transitionRun(api.services.db, runId, { from: ["queued"], to: "running", extra: { attempt: 1 } });
    const events: RunEvent[] = [3, 1, 4, 1, 5, 9].map((v, i) => metric(3 + i, i + 1, v)); // steps 1..6, seqs 3..8
    events.push({ seq: 9, ts: 1_700_000_000_100, type: "checkpoint", step: 4, actor: "student", path: "/w/checkpoints/step-4/student", sizeBytes: 1234 });
    await storeEvents(api.services.db, runId, events);
    // A pause the ended attempt never took must not pause the next one.
    await api.services.db.run.update({ where: { id: runId }, data: { lastSeq: 9, controlRequest: "pause", controlRequestedAt: new Date() } });
    await transitionRun(api.services.db, runId, { from: ["running"], to: "failed", error: "runner died" });

    const r = await api.call("POST", `/runs/${runId}/resume`, "/runs/{id}/resume");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ outcome: "requeued", fromStep: 4, run: { id: runId, status: "queued", error: null } });
    const run = await api.services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect({ resumeStep: run.resumeStep, lastStep: run.lastStep, finishedAt: run.finishedAt }).toEqual({ resumeStep: 4, lastStep: 4, finishedAt: null });
    expect(run.controlRequest).toBeNull();
    const points = await api.services.db.metricPoint.findMany({ where: { runId }, orderBy: { step: "asc" } });
    expect(points.map((p) => [p.step, p.value])).toEqual([[1, 3], [2, 1], [3, 4], [4, 1]]);
    // The rollup of the block holding steps 0..15 now summarises steps 1..4 only.
    const rollup = await api.services.db.metricRollup.findFirstOrThrow({ where: { runId, level: 1, bucket: 0 } });
    expect(rollup).toMatchObject({ firstStep: 1, lastStep: 4, lastValue: 1, minValue: 1, maxValue: 4, count: 4 });
    expect(await api.services.db.runEvent.count({ where: { runId, type: "metric" } })).toBe(4);
    expect(await api.server.queue.getJob(`${runId}-attempt-2`)).toBeDefined();

    const again = await api.call("POST", `/runs/${runId}/resume`, "/runs/{id}/resume");
    expect(again.status).toBe(409); // queued now
  });

  it("refuses a run that ended without a checkpoint, saying so", async () => {
    const runId = await launch();
    await transitionRun(api.services.db, runId, { from: ["queued"], to: "cancelled" });
    const r = await api.call("POST", `/runs/${runId}/resume`, "/runs/{id}/resume");
    expect(r.status).toBe(409);
    expect((r.json as { detail: string }).detail).toMatch(/has no checkpoint to resume from/);
  });
});

describe("tRPC run.resumeFromCheckpoint and run.checkpoints (what the run page calls)", () => {
  it("lists the checkpoints and requeues a stopped run from the latest", async () => {
    const runId = await launch();
    await transitionRun(api.services.db, runId, { from: ["queued"], to: "running", extra: { attempt: 1 } });
    await storeEvents(api.services.db, runId, [
      metric(3, 1, 0.5),
      { seq: 4, ts: 1_700_000_000_200, type: "checkpoint", step: 1, actor: "student", path: "/w/checkpoints/step-1/student", sizeBytes: 4096 },
    ]);
    await api.services.db.run.update({ where: { id: runId }, data: { lastSeq: 4 } });
    await transitionRun(api.services.db, runId, { from: ["running"], to: "stopped", message: "stopped after step 1" });
    const { checkpoints } = await api.services.caller.run.checkpoints({ runId });
    expect(checkpoints).toEqual([expect.objectContaining({ step: 1, actor: "student", sizeBytes: 4096, path: "/w/checkpoints/step-1/student" })]);
    expect(await api.services.caller.run.resumeFromCheckpoint({ runId })).toEqual({ status: "queued", outcome: "requeued", fromStep: 1, attempt: 2 });
    expect((await api.services.db.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("queued");
  });

  it("marks checkpoints that keepCheckpoints deleted and resumes from the newest one that still exists", async () => {
    const runId = await launch();
    await transitionRun(api.services.db, runId, { from: ["queued"], to: "running", extra: { attempt: 1 } });
    const checkpoint = (seq: number, step: number): RunEvent => ({ seq, ts: 1_700_000_000_000 + seq, type: "checkpoint", step, actor: "student", path: `/w/checkpoints/step-${step}/student`, sizeBytes: 4096 });
    const pruned = (seq: number, step: number): RunEvent => ({ seq, ts: 1_700_000_000_000 + seq, type: "checkpoint_pruned", step, path: `/w/checkpoints/step-${step}`, keepCheckpoints: 2 });
    await storeEvents(api.services.db, runId, [
      metric(3, 1, 0.1),
      checkpoint(4, 1),
      checkpoint(5, 2),
      checkpoint(6, 3),
      pruned(7, 1), // keepCheckpoints=2 after step 3
      checkpoint(8, 4),
      pruned(9, 2),
      // The newest one's folder was deleted too (by whatever): resuming must not pick it.
      pruned(10, 4),
      checkpoint(11, 1), // step 1 saved again after its deletion (a later attempt): it exists again
    ]);
    await api.services.db.run.update({ where: { id: runId }, data: { lastSeq: 11 } });
    await transitionRun(api.services.db, runId, { from: ["running"], to: "stopped", message: "stopped" });

    const { checkpoints } = await api.services.caller.run.checkpoints({ runId });
    expect(checkpoints.map((c) => [c.step, c.pruned?.keepCheckpoints ?? null])).toEqual([
      [1, 2],
      [2, 2],
      [3, null],
      [4, 2],
      [1, null],
    ]);
    const r = await api.call("POST", `/runs/${runId}/resume`, "/runs/{id}/resume");
    expect(r.json).toMatchObject({ outcome: "requeued", fromStep: 3 });
    expect((await api.services.db.run.findUniqueOrThrow({ where: { id: runId } })).resumeStep).toBe(3);
  });
});
