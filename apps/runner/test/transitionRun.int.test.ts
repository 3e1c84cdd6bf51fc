import { ALLOWED_TRANSITIONS, canTransition, transitionRun } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueuedRun, openServices, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

const statusEvents = (runId: string) =>
  services.db.runEvent.findMany({ where: { runId, type: "status" }, orderBy: { seq: "asc" }, select: { seq: true, payload: true } });

describe("transitionRun", () => {
  it("moves a run in `from`, allocating the next seq for its status event", async () => {
    const runId = await createQueuedRun(services, {});
    const startedAt = new Date();
    const event = await transitionRun(services.db, runId, {
      from: ["queued"],
      to: "running",
      message: "claimed",
      extra: { runnerId: "r1", startedAt, attempt: { increment: 1 } },
    });
    expect(event).toMatchObject({ seq: 2, type: "status", state: "running", message: "claimed" });
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: "running", lastSeq: 2, runnerId: "r1", attempt: 1, startedAt, finishedAt: null });
    expect((await statusEvents(runId)).map((e) => e.payload)).toEqual([expect.objectContaining({ state: "queued" }), event]);
  });

  it("returns null and changes nothing when the run is not in `from`", async () => {
    const runId = await createQueuedRun(services, {});
    expect(await transitionRun(services.db, runId, { from: ["running"], to: "failed", error: "x" })).toBeNull();
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: "queued", lastSeq: 1, error: null });
    expect(await statusEvents(runId)).toHaveLength(1);
    expect(await transitionRun(services.db, "no-such-run", { from: ["queued"], to: "running" })).toBeNull();
  });

  it("lets exactly one of two concurrent transitions from the same state win", async () => {
    const runId = await createQueuedRun(services, {});
    const results = await Promise.all([
      transitionRun(services.db, runId, { from: ["queued"], to: "running" }),
      transitionRun(services.db, runId, { from: ["queued"], to: "cancelled", error: "Cancelled on request." }),
    ]);
    const winners = results.filter((r) => r !== null);
    expect(winners).toHaveLength(1);
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe(winners[0]!.state);
    expect(run.lastSeq).toBe(2);
    expect(await statusEvents(runId)).toHaveLength(2);
  });

  it("sets finishedAt, error and logTail on a terminal transition", async () => {
    const runId = await createQueuedRun(services, {});
    await transitionRun(services.db, runId, { from: ["queued"], to: "running" });
    const event = await transitionRun(services.db, runId, { from: ["running"], to: "failed", message: "boom", error: "exit 1", logTail: "a\nb" });
    expect(event?.seq).toBe(3);
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: "failed", error: "exit 1", logTail: "a\nb", lastSeq: 3 });
    expect(run.finishedAt).toBeInstanceOf(Date);
  });

  it("pause and resume go back and forth; stopped, failed and cancelled go back to queued only to resume", async () => {
    const runId = await createQueuedRun(services, {});
    for (const [from, to] of [["queued", "running"], ["running", "paused"], ["paused", "running"], ["running", "paused"], ["paused", "stopped"], ["stopped", "queued"], ["queued", "running"], ["running", "succeeded"]] as const) {
      expect(await transitionRun(services.db, runId, { from: [from], to }), `${from} → ${to}`).not.toBeNull();
    }
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe("succeeded");
    expect((await statusEvents(runId)).map((e) => (e.payload as { state: string }).state)).toEqual([
      "queued", "running", "paused", "running", "paused", "stopped", "queued", "running", "succeeded",
    ]);
  });

  it("refuses a transition no run may make, before touching the row", async () => {
    const runId = await createQueuedRun(services, {});
    await expect(transitionRun(services.db, runId, { from: ["queued"], to: "paused" })).rejects.toThrow(/queued → paused is not an allowed transition/);
    await expect(transitionRun(services.db, runId, { from: ["succeeded"], to: "queued" })).rejects.toThrow(/succeeded → queued/);
    expect((await services.db.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("queued");
    expect(ALLOWED_TRANSITIONS.succeeded).toEqual([]);
    expect(canTransition("paused", "cancelled")).toBe(true);
  });

  it("honours extra `where` conditions", async () => {
    const runId = await createQueuedRun(services, {});
    expect(await transitionRun(services.db, runId, { from: ["queued"], to: "running", where: { runnerId: "someone" } })).toBeNull();
    expect(await transitionRun(services.db, runId, { from: ["queued"], to: "running", where: { runnerId: null } })).not.toBeNull();
  });

  it("adopts an already stored status event without allocating a seq", async () => {
    const runId = await createQueuedRun(services, {});
    await transitionRun(services.db, runId, { from: ["queued"], to: "running" });
    const reported = { seq: 3, ts: Date.now(), type: "status" as const, state: "succeeded" as const };
    await services.db.runEvent.create({ data: { runId, seq: 3, type: "status", ts: new Date(reported.ts), payload: reported } });
    await services.db.run.update({ where: { id: runId }, data: { lastSeq: 3 } });
    expect(await transitionRun(services.db, runId, { from: ["running"], to: "succeeded", recordedEvent: reported })).toEqual(reported);
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: "succeeded", lastSeq: 3 });
    expect(await statusEvents(runId)).toHaveLength(3);
  });
});
