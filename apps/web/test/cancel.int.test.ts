import { RunControlMessage, runControlChannel } from "@troupe/contracts";
import { listEventsAfter, readStreamAfter, transitionRun } from "@troupe/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExperiment, openServices, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

describe("run.cancel", () => {
  it("cancels a queued run: status, seq-2 cancelled event (stored and streamed), job removed", async () => {
    const experimentId = await createExperiment(services);
    const { runId } = await services.caller.experiment.launch({ experimentId });
    expect(await services.queue.getJob(runId)).toBeDefined();

    expect(await services.caller.run.cancel({ runId })).toEqual({ status: "cancelled", outcome: "cancelled" });

    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe("cancelled");
    expect(run.lastSeq).toBe(2);
    expect(run.finishedAt).not.toBeNull();
    const events = await listEventsAfter(services.db, runId, 0, 100);
    expect(events.map((e) => [e.seq, e.type === "status" ? e.state : e.type])).toEqual([
      [1, "queued"],
      [2, "cancelled"],
    ]);
    expect(await readStreamAfter(services.redis, runId, 0, 0)).toEqual(events);
    expect(await services.queue.getJob(runId)).toBeUndefined();
  });

  it("refuses to cancel a run that already ended, saying why", async () => {
    const experimentId = await createExperiment(services);
    const { runId } = await services.caller.experiment.launch({ experimentId });
    await services.caller.run.cancel({ runId });
    const error = await services.caller.run.cancel({ runId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("PRECONDITION_FAILED");
    expect((error as TRPCError).message).toMatch(/already ended \(cancelled\)/);
    expect(await services.db.runEvent.count({ where: { runId } })).toBe(2);
  });

  it("asks the runner to stop a running run: cancelRequestedAt and a control message", async () => {
    const experimentId = await createExperiment(services);
    const { runId } = await services.caller.experiment.launch({ experimentId });
    // What a runner does when it claims the run.
    await transitionRun(services.db, runId, { from: ["queued"], to: "running", extra: { startedAt: new Date() } });

    const subscriber = services.connection();
    const channel = runControlChannel(services.redis.options.db ?? 0); // this install's (its Redis index)
    const received = new Promise<unknown>((resolve) => {
      subscriber.on("message", (heardOn, message) => {
        if (heardOn !== channel) return;
        const parsed = RunControlMessage.parse(JSON.parse(message));
        if (parsed.runId === runId) resolve(parsed);
      });
    });
    await subscriber.subscribe(channel);

    expect(await services.caller.run.cancel({ runId })).toEqual({ status: "running", outcome: "requested" });
    expect(await received).toEqual({ runId, action: "cancel" });
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe("running"); // the runner writes the terminal event, not the web
    expect(run.cancelRequestedAt).not.toBeNull();
  });

  it("404s an unknown run", async () => {
    const error = await services.caller.run.cancel({ runId: "no-such-run" }).catch((e: unknown) => e);
    expect((error as TRPCError).code).toBe("NOT_FOUND");
  });
});
