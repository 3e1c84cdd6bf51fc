import { runEventStreamKey, type RunEvent, type RunState } from "@troupe/contracts";
import { appendToStream, storeEvents, type Db } from "@troupe/db";
import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { useApiSession } from "./helpers/apiSession";
import { apiCaller, OpenApiChecker } from "./helpers/openapi";
import { uniqueId } from "./helpers/services";

/**
 * Deleting a run (REST `DELETE /runs/{id}` and tRPC `run.delete`, one server function): an ended run
 * goes with every row stored for it, other runs keep theirs; a live run, a viewer and an unknown id
 * are refused with nothing removed. Responses are checked against the served OpenAPI document.
 */

const api = useApiSession("delete-token");

/** One event of each stored kind: metric, memory, episode, log, checkpoint (then the terminal status). */
function everyKind(terminal: RunState | null): RunEvent[] {
  const ts = 1_700_000_000_000;
  const events: RunEvent[] = [
    { seq: 2, ts, type: "status", state: "running" },
    { seq: 3, ts, type: "metric", step: 1, actor: "student", values: { "reward/mean": 0.5, loss: 1.2 } },
    { seq: 4, ts, type: "memory", step: 1, phase: "update", device: "cpu", rssBytes: 1e9 },
    {
      seq: 5,
      ts,
      type: "episode",
      step: 1,
      environment: "echo",
      group: 0,
      sample: 0,
      datasetRow: 0,
      messages: [{ actor: "student", role: "assistant", content: "a", trained: true }],
      reward: 1,
      rewardComponents: {},
    },
    { seq: 6, ts, type: "log", level: "info", message: "step 1 done" },
    { seq: 7, ts, type: "checkpoint", step: 1, actor: "student", path: "/runs/x/checkpoints/step-1/student" },
  ];
  if (terminal) events.push({ seq: 8, ts, type: "status", state: terminal });
  return events;
}

/** A run with one row in every table that references it, in `status`. */
async function runWithData(db: Db, status: RunState): Promise<string> {
  const id = uniqueId("delete-run");
  await db.run.create({
    data: { id, name: "delete test", spec: {}, specVersion: 1, seed: 0, status: "queued", workDir: `/srv/troupe/runs/${id}`, runnerId: "gpu-host-1" },
  });
  api.services.runIds.push(id);
  await storeEvents(db, id, [{ seq: 1, ts: 1_700_000_000_000, type: "status", state: "queued" }, ...everyKind(null)]);
  // stdout/stderr lines, as the runner stores them beside the events.
  await db.logLine.create({ data: { runId: id, lineNo: 1, stream: "stdout", text: "loading the model", ts: new Date() } });
  // The status last, as the runner leaves it (storeEvents keeps rows; the row's status is set here).
  await db.run.update({ where: { id }, data: { status } });
  return id;
}

async function rowsOf(db: Db, runId: string) {
  const where = { where: { runId } };
  return {
    events: await db.runEvent.count(where),
    metrics: await db.metricPoint.count(where),
    rollups: await db.metricRollup.count(where),
    memory: await db.memorySample.count(where),
    memoryRollups: await db.memoryRollup.count(where),
    episodes: await db.episode.count(where),
    logs: await db.logLine.count(where),
  };
}

describe("DELETE /runs/{id}", () => {
  it("removes an ended run with every row stored for it, in one go, and leaves other runs alone", async () => {
    const { db, redis } = api.services;
    const doomed = await runWithData(db, "succeeded");
    const kept = await runWithData(db, "failed");
    const before = await rowsOf(db, doomed);
    // Each kind really was stored, so "zero after" means deleted, not never there.
    for (const [table, count] of Object.entries(before)) expect(count, table).toBeGreaterThan(0);
    await db.idempotencyKey.create({ data: { tokenId: (await db.apiToken.findFirstOrThrow({ select: { id: true } })).id, key: uniqueId("k"), requestHash: "x", runId: doomed } });
    await appendToStream(redis, doomed, [{ seq: 1, ts: 1, type: "status", state: "queued" }]);
    const { displayName } = await db.run.findUniqueOrThrow({ where: { id: doomed }, select: { displayName: true } });

    const deleted = await api.call("DELETE", `/runs/${doomed}`, "/runs/{id}");
    expect(deleted.status).toBe(200);
    // The answer names the run and where its files remain (the web app cannot remove them).
    expect(deleted.json).toEqual({ id: doomed, name: displayName, runnerId: "gpu-host-1", workDir: `/srv/troupe/runs/${doomed}` });

    expect(await db.run.findUnique({ where: { id: doomed } })).toBeNull();
    expect(await rowsOf(db, doomed)).toEqual({ events: 0, metrics: 0, rollups: 0, memory: 0, memoryRollups: 0, episodes: 0, logs: 0 });
    expect(await db.idempotencyKey.count({ where: { runId: doomed } })).toBe(0);
    expect(await redis.exists(runEventStreamKey(doomed))).toBe(0);
    expect(await rowsOf(db, kept)).toEqual(before); // the same data as the deleted one had: untouched
    expect((await api.call("GET", `/runs/${doomed}`, "/runs/{id}")).status).toBe(404);
    expect((await api.call("GET", `/runs/${kept}`, "/runs/{id}")).status).toBe(200);
  });

  it.each(["queued", "running", "paused"] as const)("refuses a %s run (cancel it first) and removes nothing", async (status) => {
    const { db } = api.services;
    const live = await runWithData(db, status);
    const before = await rowsOf(db, live);
    const refused = await api.call("DELETE", `/runs/${live}`, "/runs/{id}");
    expect(refused.status).toBe(409);
    expect((refused.json as { detail: string }).detail).toMatch(new RegExp(`is ${status}: cancel it first`));
    expect(await db.run.findUnique({ where: { id: live }, select: { status: true } })).toEqual({ status });
    expect(await rowsOf(db, live)).toEqual(before);
  });

  it("refuses a viewer's token (403) and removes nothing", async () => {
    const { db } = api.services;
    const id = await runWithData(db, "succeeded");
    const viewer = await api.services.apiToken("viewer", "delete-viewer");
    const call = apiCaller(api.server.baseUrl, await OpenApiChecker.load(api.server.baseUrl), viewer.token);
    const refused = await call("DELETE", `/runs/${id}`, "/runs/{id}");
    expect(refused.status).toBe(403);
    expect(await db.run.count({ where: { id } })).toBe(1);
    expect((await rowsOf(db, id)).metrics).toBeGreaterThan(0);
  });

  it("answers 404 for an unknown id", async () => {
    const missing = await api.call("DELETE", `/runs/${uniqueId("no-such-run")}`, "/runs/{id}");
    expect(missing.status).toBe(404);
  });
});

describe("run.delete (tRPC)", () => {
  it("deletes an ended run for an editor and refuses a viewer", async () => {
    const { db } = api.services;
    const id = await runWithData(db, "cancelled");
    const viewer = await api.services.user("viewer", "delete-viewer-ui");
    await expect(viewer.caller.run.delete({ runId: id })).rejects.toMatchObject({ code: "FORBIDDEN" } satisfies Partial<TRPCError>);
    expect(await db.run.count({ where: { id } })).toBe(1);

    const editor = await api.services.user("editor", "delete-editor-ui");
    const answer = await editor.caller.run.delete({ runId: id });
    expect(answer.id).toBe(id);
    expect(await db.run.count({ where: { id } })).toBe(0);
    expect((await rowsOf(db, id)).events).toBe(0);
    await expect(editor.caller.run.delete({ runId: id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
