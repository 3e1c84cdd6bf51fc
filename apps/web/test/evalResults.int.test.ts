import { DEMO_SPEC_INPUT, type RunEvent, type RunSpecInput } from "@troupe/contracts";
import { storeEvents, transitionRun } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupEvalResults } from "../src/features/runs/lib/evalResults";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { apiCaller, OpenApiChecker } from "./helpers/openapi";
import { openServices, uniqueId, type TestServices } from "./helpers/services";

/**
 * Eval-only runs (`trainer.steps: 0`) with a Hugging Face dataset through REST, and their eval metrics per
 * environment: through GET /runs/{id}/metrics and the run page's `run.evalResults`, against real Postgres and Redis.
 * The metric events are the runtime's own shape (gpu-runtime evaluation.py, an eval-only run at step 0).
 */

let services: TestServices;
let server: ApiServer;
let call: ReturnType<typeof apiCaller>;

/** The demo, evaluated only: its letters environment held out a quarter, plus an eval-only exam on a hub dataset. */
function evalOnlySpec(): RunSpecInput {
  const s = structuredClone(DEMO_SPEC_INPUT);
  s.name = uniqueId("eval-only");
  s.datasets[0]!.evalFraction = 0.25;
  s.datasets.push({ name: "exam", source: { kind: "huggingface", id: "openai/gsm8k", config: "main", split: "test" } });
  s.environments.push({ ...s.environments[0]!, name: "exam", dataset: "exam", evalOnly: true });
  s.trainer = { ...s.trainer, steps: 0 };
  return s;
}

const EVAL_EVENT_VALUES = {
  "eval/reward/mean": 0.4,
  "eval/completion_len": 7.5,
  "eval/reward/letter_match": 0.4,
  "eval/samples": 72,
  "eval/echo/reward/mean": 0.5,
  "eval/echo/completion_len": 7,
  "eval/echo/reward/letter_match": 0.5,
  "eval/echo/samples": 64,
  "eval/echo/reward/std": 0.1,
  "eval/exam/reward/mean": 0.25,
  "eval/exam/completion_len": 8,
  "eval/exam/reward/letter_match": 0.25,
  "eval/exam/samples": 8,
  "eval/exam/reward/std": 0.2,
};

beforeAll(async () => {
  services = openServices();
  server = await startApiServer({ isolateQueue: true });
  const checker = await OpenApiChecker.load(server.baseUrl);
  const { token } = await services.apiToken("editor", "eval-results-test");
  call = apiCaller(server.baseUrl, checker, token);
});

afterAll(async () => {
  await server?.close();
  await services?.close();
});

describe("eval-only runs", () => {
  it("POST /runs accepts steps 0 with a Hugging Face dataset and an eval-only environment, and refuses the eval rules by field", async () => {
    const ok = await call("POST", "/runs", "/runs", { body: JSON.stringify(evalOnlySpec()), headers: { "content-type": "application/json" } });
    expect(ok.status).toBe(201);
    const id = (ok.json as { id: string }).id;
    services.runIds.push(id);
    const stored = await services.db.run.findUniqueOrThrow({ where: { id }, select: { spec: true } });
    const spec = stored.spec as { trainer: { steps: number }; environments: { evalOnly: boolean }[]; datasets: { source: unknown }[] };
    expect(spec.trainer.steps).toBe(0);
    expect(spec.environments.map((e) => e.evalOnly)).toEqual([false, true]);
    expect(spec.datasets[1]!.source).toEqual({ kind: "huggingface", id: "openai/gsm8k", config: "main", split: "test" });

    const training = evalOnlySpec();
    training.trainer = { ...training.trainer, steps: 10 }; // evalEvery 0: the exam would never be evaluated
    const refused = await call("POST", "/runs", "/runs", { body: JSON.stringify(training), headers: { "content-type": "application/json" } });
    expect(refused.status).toBe(400);
    const errors = (refused.json as { errors: { path: string; message: string }[] }).errors;
    expect(errors.map((e) => e.path)).toEqual(["environments.1.evalOnly"]);
    expect(errors[0]!.message).toMatch(/trainer.evalEvery is 0/);
  });

  it("reports eval metrics per environment through REST and the run page's table", async () => {
    const launched = await call("POST", "/runs", "/runs", { body: JSON.stringify(evalOnlySpec()), headers: { "content-type": "application/json" } });
    const runId = (launched.json as { id: string }).id;
    services.runIds.push(runId);
    await services.queue.remove(runId).catch(() => 0);
    await transitionRun(services.db, runId, { from: ["queued"], to: "running" });
    const events: RunEvent[] = [
      { seq: 3, ts: Date.now(), type: "metric", step: 0, actor: "student", values: EVAL_EVENT_VALUES },
      { seq: 4, ts: Date.now(), type: "status", state: "succeeded", message: "evaluated 2 environment(s) once; trainer.steps is 0, so nothing was trained" },
    ];
    await storeEvents(services.db, runId, events);
    await transitionRun(services.db, runId, { from: ["running"], to: "succeeded" }); // what the runner does on the status

    const r = await call("GET", `/runs/${runId}/metrics?name=eval/exam/reward/mean,eval/exam/samples,eval/echo/reward/mean`, "/runs/{id}/metrics");
    const series = (r.json as { series: { name: string; actor: string; points: { step: number; value: number }[] }[] }).series;
    expect(series.map((s) => [s.name, s.actor, s.points])).toEqual([
      ["eval/echo/reward/mean", "student", [{ step: 0, value: 0.5, min: 0.5, max: 0.5 }]],
      ["eval/exam/reward/mean", "student", [{ step: 0, value: 0.25, min: 0.25, max: 0.25 }]],
      ["eval/exam/samples", "student", [{ step: 0, value: 8, min: 8, max: 8 }]],
    ]);
    const run = await call("GET", `/runs/${runId}`, "/runs/{id}");
    expect(run.json).toMatchObject({ status: "succeeded", totalSteps: 0 });

    const table = await services.caller.run.evalResults({ runId });
    expect(table.evalOnlyRun).toBe(true);
    expect(table.rows).toEqual([
      { environment: "echo", actor: "student", step: 0, values: { "reward/mean": 0.5, "reward/std": 0.1, "reward/letter_match": 0.5, completion_len: 7, samples: 64 } },
      { environment: "exam", actor: "student", step: 0, values: { "reward/mean": 0.25, "reward/std": 0.2, "reward/letter_match": 0.25, completion_len: 8, samples: 8 } },
    ]);
  });
});

describe("groupEvalResults", () => {
  it("keeps each environment's latest evaluation, tells environments from the per-actor totals, and prefers the longest name", () => {
    const rows = groupEvalResults(
      [
        { name: "eval/reward/mean", actor: "a", step: 20, value: 9 }, // the actor's total, not an environment's
        { name: "eval/math/reward/mean", actor: "a", step: 20, value: 0.5 },
        { name: "eval/math/reward/old_component", actor: "a", step: 10, value: 1 }, // not reported at step 20
        { name: "eval/math.hard/reward/mean", actor: "a", step: 20, value: 0.1 },
        { name: "eval/math/samples", actor: "b", step: 10, value: 4 },
      ],
      ["math", "math.hard", "unused"],
    );
    expect(rows).toEqual([
      { environment: "math", actor: "a", step: 20, values: { "reward/mean": 0.5 } },
      { environment: "math", actor: "b", step: 10, values: { samples: 4 } },
      { environment: "math.hard", actor: "a", step: 20, values: { "reward/mean": 0.1 } },
    ]);
  });
});
