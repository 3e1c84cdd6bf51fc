import { DEMO_SPEC_INPUT, RunSpec } from "@troupe/contracts";
import { TRPCError } from "@trpc/server";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FieldValidationError } from "../src/server/api/trpc";
import { openServices, type TestServices } from "./helpers/services";
import { rejectionOf } from "./helpers/rejection";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

const issuesOf = (e: TRPCError) => (e.cause as FieldValidationError).issues;
const demo = () => structuredClone(DEMO_SPEC_INPUT) as Record<string, unknown>;

describe("composer: create, save, clone from a run", () => {
  it("saves a draft as is (even invalid) and names the experiment after spec.name", async () => {
    const { id } = await services.caller.experiment.create({ spec: { ...demo(), name: "draft one", trainer: { steps: -1 } } });
    services.experimentIds.push(id);
    let row = await services.db.experiment.findUniqueOrThrow({ where: { id } });
    expect(row.name).toBe("draft one");
    expect((row.spec as { trainer: { steps: number } }).trainer.steps).toBe(-1);
    const detail = await services.caller.experiment.byId({ id });
    expect(detail.specError).toMatch(/trainer\.steps/);

    await services.caller.experiment.save({ id, spec: { ...demo(), name: "draft two" } });
    row = await services.db.experiment.findUniqueOrThrow({ where: { id } });
    expect(row.name).toBe("draft two");
    expect(RunSpec.safeParse(row.spec).success).toBe(true);
  });

  it("refuses to launch an invalid saved draft, naming the field, and creates no run", async () => {
    const { id } = await services.caller.experiment.create({ spec: { ...demo(), trainer: { steps: -1 } } });
    services.experimentIds.push(id);
    const error = await rejectionOf(services.caller.experiment.launch({ experimentId: id }));
    expect(error.code).toBe("BAD_REQUEST");
    expect(issuesOf(error).map((i) => i.path)).toEqual(["trainer.steps"]);
    expect(await services.db.run.count({ where: { experimentId: id } })).toBe(0);
  });

  it("launches with a GPU count and refuses fewer GPUs than the placement uses", async () => {
    const spec = demo() as any;
    spec.trainer = { ...spec.trainer, device: "cuda" };
    spec.actors[0].placement = { gpus: [0, 1] };
    const { id } = await services.caller.experiment.create({ spec });
    services.experimentIds.push(id);
    const tooFew = await rejectionOf(services.caller.experiment.launch({ experimentId: id, gpus: 1 }));
    expect(issuesOf(tooFew)[0]).toMatchObject({ path: "gpus" });
    const { runId } = await services.caller.experiment.launch({ experimentId: id, gpus: 4, priority: 50 });
    const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ gpus: 4, priority: 50, status: "queued" });
    const jobs = await services.queue.getJobs(["prioritized", "waiting"]);
    expect(jobs.find((j) => j.id === runId)?.data).toEqual({ runId, gpus: 4 });
  });

  it("clones a run's frozen spec into a new experiment", async () => {
    const { id } = await services.caller.experiment.create({ spec: demo() });
    services.experimentIds.push(id);
    const { runId } = await services.caller.experiment.launch({ experimentId: id, overrides: { steps: 3 } });
    const clone = await services.caller.experiment.fromRun({ runId });
    services.experimentIds.push(clone.id);
    const row = await services.db.experiment.findUniqueOrThrow({ where: { id: clone.id } });
    expect(row.name).toContain(`from run ${runId.slice(-6)}`);
    const spec = RunSpec.parse(row.spec);
    expect(spec.trainer.steps).toBe(3);
    expect(spec.actors).toEqual(RunSpec.parse(DEMO_SPEC_INPUT).actors);
    const missing = await rejectionOf(services.caller.experiment.fromRun({ runId: "no-such-run" }));
    expect(missing.code).toBe("NOT_FOUND");
  });
});

describe("composer: import YAML or JSON", () => {
  it("round-trips the demo through YAML", async () => {
    const out = await services.caller.experiment.importSpec({ text: stringify(DEMO_SPEC_INPUT), format: "yaml" });
    expect(out.issues).toEqual([]);
    expect(out.spec).toEqual(JSON.parse(JSON.stringify(DEMO_SPEC_INPUT)));
  });

  it("locates RunSpec issues on the YAML lines", async () => {
    const text = "specVersion: 1\nname: x\nactors:\n  - name: a\n    model: { source: tiny }\n    training:\n      learningRate: -2\n";
    const out = await services.caller.experiment.importSpec({ text, format: "yaml" });
    const lr = out.issues.find((i) => i.path === "actors.0.training.learningRate");
    expect(lr).toMatchObject({ line: 7, column: 21 });
    expect(out.issues.map((i) => i.path)).toContain("datasets");
  });

  it("refuses a YAML syntax error with its line and column, and JSON errors too", async () => {
    const yamlError = await rejectionOf(services.caller.experiment.importSpec({ text: "name: [unclosed\nseed: 1\n", format: "yaml" }));
    expect(yamlError.code).toBe("BAD_REQUEST");
    expect(issuesOf(yamlError)[0]!.message).toMatch(/^line \d+, column \d+: invalid YAML/);
    const jsonError = await rejectionOf(services.caller.experiment.importSpec({ text: '{"name": }', format: "json" }));
    // Node's JSON.parse gives a position only for some errors; the message always names the token.
    expect(issuesOf(jsonError)[0]!.message).toMatch(/invalid JSON: Unexpected token '}'/);
    const list = await rejectionOf(services.caller.experiment.importSpec({ text: "- 1\n- 2\n", format: "yaml" }));
    expect(issuesOf(list)[0]!.message).toMatch(/mapping/);
  });
});
