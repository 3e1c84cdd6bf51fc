import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recoverOwnRuns, sweepStalledRuns } from "../src/run/recovery";
import { runJob } from "../src/run/runJob";
import { createQueuedRun, openServices, streamIds, testContext, uniqueId, waitFor, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
const getRun = (runId: string) => services.db.run.findUniqueOrThrow({ where: { id: runId } });

/** A run left `running` by some runner, its `running` event as seq 2. */
async function runningRun(runnerId: string, heartbeatAt: Date, pid?: number) {
  const runId = await createQueuedRun(services, {}, { status: "running", runnerId, heartbeatAt, startedAt: minutesAgo(30), ...(pid ? { pid } : {}) });
  await services.db.runEvent.create({ data: { runId, seq: 2, type: "status", ts: new Date(), payload: { seq: 2, ts: 1, type: "status", state: "running" } } });
  await services.db.run.update({ where: { id: runId }, data: { lastSeq: 2 } });
  return runId;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("recovery of runs whose runner died", () => {
  it("at start-up, fails this runner's stale `running` runs with the reason, as a status event", async () => {
    const { ctx } = testContext(services);
    const heartbeat = minutesAgo(5);
    const mine = await runningRun(ctx.env.runnerId, heartbeat);
    const someoneElses = await runningRun(uniqueId("other-runner"), new Date());

    expect(await recoverOwnRuns(ctx)).toBe(1);

    const run = await getRun(mine);
    expect(run.status).toBe("failed");
    expect(run.error).toBe(`runner ${ctx.env.runnerId} restarted while the run was running (last heartbeat ${heartbeat.toISOString()}); the run was failed, not restarted`);
    expect(run.lastSeq).toBe(3);
    expect(run.finishedAt).toBeInstanceOf(Date);
    const event = await services.db.runEvent.findUniqueOrThrow({ where: { runId_seq: { runId: mine, seq: 3 } } });
    expect(event.payload).toMatchObject({ type: "status", state: "failed" });
    expect(await streamIds(services.redis, mine)).toEqual(["1-0", "3-0"]);
    expect((await getRun(someoneElses)).status).toBe("running");
    expect(await recoverOwnRuns(ctx)).toBe(0);
  });

  it("kills a previous incarnation's runtime that is still alive (checked by its command line)", async () => {
    const { ctx } = testContext(services);
    const runId = await runningRun(ctx.env.runnerId, minutesAgo(1));
    const orphan = spawn("python3", ["-c", "import time; time.sleep(60)", "troupe", "run", `/work/${runId}/spec.json`], { detached: true, stdio: "ignore" });
    const stranger = spawn("python3", ["-c", "import time; time.sleep(60)"], { detached: true, stdio: "ignore" });
    try {
      await services.db.run.update({ where: { id: runId }, data: { pid: orphan.pid! } });
      // A pid that belongs to someone else now (pids are reused) must not be killed.
      const reused = await runningRun(ctx.env.runnerId, minutesAgo(1), stranger.pid!);

      expect(await recoverOwnRuns(ctx)).toBe(2);
      await waitFor("the orphan to die", async () => !alive(orphan.pid!), 5_000);
      expect((await getRun(runId)).error).toContain(`its runtime (pid ${orphan.pid}) was still alive and was killed`);
      expect(alive(stranger.pid!)).toBe(true);
      expect((await getRun(reused)).error).not.toContain("was killed");
    } finally {
      orphan.kill("SIGKILL");
      stranger.kill("SIGKILL");
    }
  });

  it("the sweeper fails any runner's run whose heartbeat is older than the stall timeout", async () => {
    // A short stall timeout: the sweeper waits until Postgres has been up that long (a test database may be new).
    const { ctx } = testContext(services, { stallTimeoutMs: 5_000, heartbeatMs: 1_000 });
    const deadRunner = uniqueId("dead-runner");
    const heartbeat = minutesAgo(2);
    const stale = await runningRun(deadRunner, heartbeat);
    const fresh = await runningRun(deadRunner, new Date());
    const supervisedHere = await runningRun(ctx.env.runnerId, minutesAgo(2));
    ctx.active.set(supervisedHere, { requestStop: () => undefined, requestHandOver: () => undefined, control: () => undefined, applyRequestedControl: async () => undefined });

    expect(await sweepStalledRuns(ctx)).toBeGreaterThanOrEqual(1);

    expect(await getRun(stale)).toMatchObject({ status: "failed", error: `runner ${deadRunner} stopped heartbeating at ${heartbeat.toISOString()}` });
    expect((await getRun(fresh)).status).toBe("running");
    expect((await getRun(supervisedHere)).status).toBe("running");
  });

  it("a re-delivered job of a runner that stopped heartbeating fails the run instead of running it twice", async () => {
    const { ctx } = testContext(services);
    const deadRunner = uniqueId("dead-runner");
    const stale = await runningRun(deadRunner, minutesAgo(5));
    const live = await runningRun(uniqueId("live-runner"), new Date());

    expect(await runJob(ctx, stale)).toMatchObject({ kind: "skipped", reason: expect.stringContaining(`runner ${deadRunner} stopped heartbeating`) });
    expect(await getRun(stale)).toMatchObject({ status: "failed", error: expect.stringContaining("the queue re-delivered the job") });

    expect(await runJob(ctx, live)).toMatchObject({ kind: "skipped", reason: expect.stringMatching(/^already running on runner live-runner/) });
    expect((await getRun(live)).status).toBe("running");
  });

  it("skips a job whose run was cancelled while queued, or does not exist", async () => {
    const { ctx } = testContext(services);
    const cancelled = await createQueuedRun(services, {}, { status: "cancelled" });
    expect(await runJob(ctx, cancelled)).toEqual({ kind: "skipped", reason: "run is cancelled" });
    expect(await runJob(ctx, "doesnotexist")).toEqual({ kind: "skipped", reason: "run not found" });
  });
});
