import { DEMO_SPEC, RunSpec, runEventStreamKey, runJobPriority } from "@troupe/contracts";
import { listEventsAfter, readStreamAfter } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FieldValidationError } from "../src/server/api/trpc";
import { createExperiment, openServices, type TestServices } from "./helpers/services";
import { rejectionOf } from "./helpers/rejection";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

describe("experiment.launch", () => {
  it("creates exactly one run with its frozen spec, one queued event (stored and streamed) and one job", async () => {
    const experimentId = await createExperiment(services);
    const { runId } = await services.caller.experiment.launch({ experimentId, overrides: { steps: 7, seed: 42 }, priority: 10 });

    const runs = await services.db.run.findMany({ where: { experimentId } });
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.id).toBe(runId);
    expect(run).toMatchObject({ status: "queued", source: "ui", seed: 42, priority: 10, gpus: 0, lastSeq: 1, specVersion: 1 });
    expect(run.tags).toEqual(DEMO_SPEC.tags);
    // Frozen with every default filled: it parses to itself.
    const spec = RunSpec.parse(run.spec);
    expect(run.spec).toEqual(spec);
    expect(spec.trainer.steps).toBe(7);
    expect(spec.seed).toBe(42);
    expect(spec.actors[0]?.training.optimizer).toBe("adamw");

    const events = await listEventsAfter(services.db, runId, 0, 100);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ seq: 1, type: "status", state: "queued" });
    expect(await readStreamAfter(services.redis, runId, 0, 0)).toEqual(events);

    const jobs = await services.queue.getJobs(["prioritized", "waiting", "delayed", "active"]);
    expect(jobs.map((j) => j.id)).toEqual([runId]);
    const job = jobs[0]!;
    expect(job.name).toBe("run");
    expect(job.data).toEqual({ runId, gpus: 0 });
    expect(job.opts.priority).toBe(runJobPriority({ priority: 10, attempt: 0 })); // the queue order of contracts/queue.ts
    expect(job.opts.priority).toBeLessThan(runJobPriority({ priority: 9, attempt: 1 })); // higher Troupe priority → lower BullMQ number (runs sooner)
  });

  it("rejects an invalid override with the spec field's path and creates nothing", async () => {
    const experimentId = await createExperiment(services);
    const jobsBefore = await services.queue.count();

    const steps = await rejectionOf(services.caller.experiment.launch({ experimentId, overrides: { steps: -1 } }));
    expect(steps.code).toBe("BAD_REQUEST");
    expect(steps.cause).toBeInstanceOf(FieldValidationError);
    expect((steps.cause as FieldValidationError).issues.map((i) => i.path)).toEqual(["trainer.steps"]);
    expect(steps.message).toMatch(/trainer\.steps/);

    const seed = await rejectionOf(services.caller.experiment.launch({ experimentId, overrides: { seed: -1 } }));
    expect((seed.cause as FieldValidationError).issues.map((i) => i.path)).toEqual(["seed"]);

    const fractional = await rejectionOf(services.caller.experiment.launch({ experimentId, overrides: { steps: 2.5 } }));
    expect((fractional.cause as FieldValidationError).issues.map((i) => i.path)).toEqual(["trainer.steps"]);

    expect(await services.db.run.count({ where: { experimentId } })).toBe(0);
    expect(await services.queue.count()).toBe(jobsBefore);
  });

  it("rejects a bad priority at the input, naming the field", async () => {
    const experimentId = await createExperiment(services);
    const error = await rejectionOf(services.caller.experiment.launch({ experimentId, priority: 500 }));
    expect(error.code).toBe("BAD_REQUEST");
    expect(JSON.stringify(error.cause)).toMatch(/priority/);
    expect(await services.db.run.count({ where: { experimentId } })).toBe(0);
  });

  it("reports an experiment whose stored spec no longer validates, with the path", async () => {
    const { environments, ...rest } = DEMO_SPEC;
    const experimentId = await createExperiment(services, { ...rest, environments: [{ ...environments[0], dataset: "missing" }] });
    const error = await rejectionOf(services.caller.experiment.launch({ experimentId }));
    expect((error.cause as FieldValidationError).issues).toEqual([
      { path: "environments.0.dataset", message: 'unknown dataset "missing"' },
    ]);
  });

  it("404s an unknown experiment", async () => {
    const error = await rejectionOf(services.caller.experiment.launch({ experimentId: "no-such-experiment" }));
    expect(error.code).toBe("NOT_FOUND");
  });

  it("lists experiments with a summary and shows a launched run in run.list / run.byId", async () => {
    const experimentId = await createExperiment(services);
    const { runId } = await services.caller.experiment.launch({ experimentId });
    const list = await services.caller.experiment.list({ limit: 200 });
    const mine = list.items.find((e) => e.id === experimentId);
    expect(mine?.summary?.actors).toEqual([{ name: "student", model: "tiny:tiny-char-2l", backend: "hf", trainable: true }]);
    expect(mine?.runCount).toBe(1);

    const runs = await services.caller.run.list({ experimentId });
    expect(runs.items.map((r) => r.id)).toEqual([runId]);
    expect(runs.items[0]).toMatchObject({ status: "queued", totalSteps: DEMO_SPEC.trainer.steps, lastReward: null });
    const detail = await services.caller.run.byId({ runId });
    expect(detail).toMatchObject({ id: runId, experimentName: "web test experiment", lastSeq: 1, status: "queued" });
    expect(await services.redis.exists(runEventStreamKey(runId))).toBe(1);
  });
});
