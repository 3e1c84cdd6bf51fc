import { runControlChannel, type RuntimeControlCommandName } from "@troupe/contracts";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActiveRun } from "../src/context";
import { startControlSubscriber } from "../src/control/controlSubscriber";
import { memoryLog } from "../src/log";
import { runJob } from "../src/run/runJob";
import { createQueuedRun, openServices, serviceUrls, testContext, uniqueId, waitFor, type TestServices } from "./helpers/services";

/**
 * Pause / resume / stop over pub/sub are scoped to one install (its Redis database index) and backed
 * by the Run row (`controlRequest`), so a runner that missed the message still acts, exactly once.
 * Real Redis and Postgres; the stand-in runtime echoes every control line it receives as a log event.
 */

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

/** The same Redis server on another database index: a second install. */
function otherIndexUrl(redisUrl: string): { url: string; db: number } {
  const url = new URL(redisUrl);
  const db = Number(url.pathname.replace("/", "") || "0");
  const other = (db + 1) % 16;
  url.pathname = `/${other}`;
  return { url: url.toString(), db: other };
}

/** Records what the subscriber asked of a run. */
function recordingRun(calls: string[]): ActiveRun {
  return {
    requestStop: (reason) => calls.push(`stop:${reason}`),
    requestHandOver: () => calls.push("handover"),
    control: (command) => calls.push(`control:${command}`),
    applyRequestedControl: async () => {
      calls.push("apply");
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The control lines the stand-in runtime received, in order. */
async function controlLinesReceived(runId: string): Promise<string[]> {
  const logs = await services.db.runEvent.findMany({ where: { runId, type: "log" }, orderBy: { seq: "asc" } });
  return logs.map((e) => (e.payload as { message: string }).message).filter((m) => m.startsWith("control "));
}

/** What the web does (runs/server/control.ts): store the command on the row, then publish a wake-up. */
async function requestControl(runId: string, action: RuntimeControlCommandName, publish?: Redis): Promise<void> {
  await services.db.run.update({ where: { id: runId }, data: { controlRequest: action, controlRequestedAt: new Date() } });
  if (publish) await publish.publish(runControlChannel(publish.options.db ?? 0), JSON.stringify({ runId, action }));
}

describe("run control channel per install", () => {
  it("two installs on different Redis database indexes do not hear each other's commands", async () => {
    const { redisUrl } = serviceUrls();
    const other = otherIndexUrl(redisUrl);
    const runId = uniqueId("shared-run-id"); // the same id in both, so only the channel can tell them apart
    const callsA: string[] = [];
    const callsB: string[] = [];
    const subA = await startControlSubscriber(redisUrl, new Map([[runId, recordingRun(callsA)]]), memoryLog());
    const subB = await startControlSubscriber(other.url, new Map([[runId, recordingRun(callsB)]]), memoryLog());
    const webA = new Redis(redisUrl);
    const webB = new Redis(other.url);
    try {
      expect(subA.channel).not.toBe(subB.channel);
      expect(subB.channel).toBe(runControlChannel(other.db));
      const send = (web: Redis, action: string) => web.publish(runControlChannel(web.options.db ?? 0), JSON.stringify({ runId, action }));
      expect(await send(webA, "pause")).toBe(1); // heard by install A's runner only
      await waitFor("install A to hear its pause", async () => callsA.length === 1);
      expect(await send(webB, "cancel")).toBe(1);
      await waitFor("install B to hear its cancel", async () => callsB.length === 1);
      await sleep(200);
      expect(callsA).toEqual(["apply"]);
      expect(callsB).toEqual(["stop:cancel"]);
    } finally {
      await Promise.all([subA.close(), subB.close()]);
      webA.disconnect();
      webB.disconnect();
    }
  });
});

describe("stored control requests", () => {
  it("a command sent while no subscriber listens is applied by the heartbeat; repeats are applied once", { timeout: 60_000 }, async () => {
    const { ctx } = testContext(services, { heartbeatMs: 100 });
    const runId = await createQueuedRun(services, { specVersion: 1, name: "fixture", fixture: { mode: "forever", stepMs: 50 } });
    const job = runJob(ctx, runId);
    await waitFor("the runtime's first metric", () => services.db.metricPoint.count({ where: { runId } }));

    // No subscriber at all (a runner reconnecting, or a message published to another install).
    await requestControl(runId, "pause");
    await waitFor("the stored pause to reach the runtime", async () => (await controlLinesReceived(runId)).length === 1);
    expect(await controlLinesReceived(runId)).toEqual(['control {"command":"pause"}']);
    expect(await services.db.run.findUniqueOrThrow({ where: { id: runId }, select: { controlRequest: true } })).toEqual({ controlRequest: null });

    // Now with the subscriber too: one stored command, three messages and many heartbeats → one line.
    const control = await startControlSubscriber(serviceUrls().redisUrl, ctx.active, ctx.log);
    try {
      await requestControl(runId, "resume", services.redis);
      await services.redis.publish(control.channel, JSON.stringify({ runId, action: "resume" }));
      await services.redis.publish(control.channel, JSON.stringify({ runId, action: "resume" }));
      await waitFor("the resume to reach the runtime", async () => (await controlLinesReceived(runId)).length === 2);
      await sleep(1_000); // ten heartbeats
      expect(await controlLinesReceived(runId)).toEqual(['control {"command":"pause"}', 'control {"command":"resume"}']);

      await services.db.run.update({ where: { id: runId }, data: { cancelRequestedAt: new Date() } });
      expect(await job).toEqual({ kind: "finished", status: "cancelled" });
    } finally {
      await control.close();
    }
  });
});
