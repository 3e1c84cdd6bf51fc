import { DEMO_SPEC, RunSpec, type RunEvent } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FieldValidationError } from "../src/server/api/trpc";
import { runSourceIssues } from "../src/features/runs/server/runSources";
import { createBareRun, openServices, uniqueId, type TestServices } from "./helpers/services";

/**
 * Collect (`run.collect`) on real Postgres: a finished run's episodes at or above the threshold become an
 * uploaded dataset; a run still going, a taken name, or nothing at the threshold are refused by field. And the
 * launch check of actors that start from another run's checkpoint (runSources.ts).
 */

let services: TestServices;
let runId: string;
const datasetIds: string[] = [];

async function issuesOf(call: Promise<unknown>): Promise<Record<string, string>> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    const cause = (error as TRPCError).cause;
    expect(cause).toBeInstanceOf(FieldValidationError);
    return Object.fromEntries((cause as FieldValidationError).issues.map((i) => [i.path, i.message]));
  }
  throw new Error("expected a refusal");
}

beforeAll(async () => {
  services = openServices();
  runId = await createBareRun(services);
  const events: RunEvent[] = [];
  let seq = 2;
  for (const step of [1, 2, 3]) {
    for (const group of [0, 1]) {
      events.push({
        seq: seq++,
        ts: 1_700_000_000_000 + seq,
        type: "episode",
        step,
        environment: "echo",
        group,
        sample: 0,
        datasetRow: group,
        messages: [
          { actor: "letters", role: "user", content: `say ${"ab"[group]}:`, trained: false },
          { actor: "student", role: "assistant", content: group === 0 ? "aaaa" : `b${step}`, trained: true },
        ],
        reward: group === 0 ? 1 : step / 10,
        rewardComponents: {},
      });
    }
  }
  events.push({ seq: seq++, ts: 1_700_000_100_000, type: "checkpoint", step: 2, actor: "student", path: "/runs/x/checkpoints/step-2/student" });
  events.push({ seq: seq++, ts: 1_700_000_100_001, type: "checkpoint", step: 3, actor: "student", path: "/runs/x/checkpoints/step-3/student" });
  events.push({ seq: seq++, ts: 1_700_000_100_002, type: "checkpoint_pruned", step: 2, path: "/runs/x/checkpoints/step-2", keepCheckpoints: 1 });
  await storeEvents(services.db, runId, events);
});

afterAll(async () => {
  await services.db.dataset.deleteMany({ where: { id: { in: datasetIds } } });
  await services.close();
});

describe("collect", () => {
  it("refuses a run that is still going", async () => {
    expect(await issuesOf(services.caller.run.collect({ runId, name: uniqueId("c_run").replace(/-/g, "_"), minReward: 0 }))).toEqual({
      runId: 'run "web test run" is running: collect from a finished run',
    });
  });

  it("stores the completions at or above the threshold, once each, as a jsonl dataset", async () => {
    await services.db.run.update({ where: { id: runId }, data: { status: "succeeded" } });
    const name = uniqueId("collected").replace(/-/g, "_");
    const result = await services.caller.run.collect({ runId, name, minReward: 0.2 });
    datasetIds.push(result.dataset.id);
    expect(result.episodesScanned).toBe(6);
    expect(result.actors).toEqual([{ actor: "student", threshold: 0.2, scanned: 6, kept: 3 }]);
    expect(result.datasetSpec).toEqual({ name, source: { kind: "stored", datasetId: result.dataset.id, format: "jsonl" }, evalFraction: 0 });
    const row = await services.db.dataset.findUniqueOrThrow({ where: { id: result.dataset.id } });
    const lines = Buffer.from(row.content!).toString("utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.prompt, l.completion, l.step])).toEqual([
      ["say a:", "aaaa", 1],
      ["say b:", "b2", 2],
      ["say b:", "b3", 3],
    ]);
    expect(row.columns).toEqual(["prompt", "completion", "actor", "reward", "step", "environment", "datasetRow", "run"]);
    // The dataset is what an sft run of the demo reads.
    const spec = RunSpec.safeParse({
      ...DEMO_SPEC,
      algorithm: { ...DEMO_SPEC.algorithm, name: "sft" },
      datasets: [result.datasetSpec],
      rewards: [],
      environments: [{ ...DEMO_SPEC.environments[0], dataset: name, rewards: [] }],
    });
    expect(spec.success, JSON.stringify(spec.error?.issues)).toBe(true);

    expect(await issuesOf(services.caller.run.collect({ runId, name, minReward: 0 }))).toEqual({
      name: `a dataset named "${name}" already exists (id ${result.dataset.id}): choose another name`,
    });
  });

  it("says why nothing was kept, and names an actor with no completions", async () => {
    const name = uniqueId("none").replace(/-/g, "_");
    expect(await issuesOf(services.caller.run.collect({ runId, name, minReward: 2 }))).toEqual({
      minReward: "no completion reached its threshold: the best of 6 episodes scored 1",
    });
    expect(await issuesOf(services.caller.run.collect({ runId, name, minReward: 0, actors: ["Bob"] }))).toEqual({
      actors: 'no recorded episode has a trained completion by "Bob" (actors found: student)',
    });
  });
});

describe("actors that start from another run's checkpoint", () => {
  const specFrom = (model: Record<string, unknown>) => RunSpec.parse({ ...DEMO_SPEC, actors: [{ ...DEMO_SPEC.actors[0], model: { source: "run", ...model } }] });

  it("accepts a checkpoint that exists, and refuses a missing run, a pruned or unsaved step, a missing actor", async () => {
    expect(await runSourceIssues(services.db, specFrom({ runId, step: 3 }))).toEqual([]);
    expect(await runSourceIssues(services.db, specFrom({ runId: "no-such-run", step: 3 }))).toEqual([
      { path: "actors.0.model.runId", message: 'no run has id "no-such-run"' },
    ]);
    expect(await runSourceIssues(services.db, specFrom({ runId, step: 2 }))).toEqual([
      { path: "actors.0.model.step", message: `run "web test run" (${runId}) has no checkpoint at step 2 (it has steps 3)` },
    ]);
    expect(await runSourceIssues(services.db, specFrom({ runId, step: 3, actor: "teacher" }))).toEqual([
      { path: "actors.0.model.actor", message: 'the step-3 checkpoint of run "web test run" holds no actor "teacher" (it holds student): set model.actor' },
    ]);
  });
});
