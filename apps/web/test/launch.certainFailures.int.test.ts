import { DEMO_SPEC_INPUT } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExperiment, openServices, uniqueId, type TestServices } from "./helpers/services";
import { startApiServer, type ApiServer } from "./helpers/apiServer";

/**
 * Accepted, then certain to fail (issue 30, finding 8): each is now refused by field before
 * anything is stored or queued. A JSONL value with a lone surrogate (answered 201, then
 * `UnicodeEncodeError` at step 1), a `prompt.field` naming no column of its dataset and a stored
 * `datasetId` that does not exist (queued through REST, then failed on the runner). The UI launch
 * and the REST launch run one shared check (datasetLaunchIssues), so both refuse the same field.
 */

let services: TestServices;
let api: ApiServer;
let token: string;

beforeAll(async () => {
  services = openServices();
  api = await startApiServer({ isolateQueue: true });
  token = (await services.apiToken("editor", "certain-failures")).token;
});
afterAll(async () => {
  await api?.close();
  await services?.close();
});

type Problem = { status: number; detail: string; errors?: { path: string; message: string; line?: number }[] };

async function rest(method: string, path: string, body: string, contentType: string): Promise<{ status: number; problem: Problem }> {
  const response = await fetch(`${api.baseUrl}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": contentType }, body });
  const text = await response.text();
  return { status: response.status, problem: (text ? JSON.parse(text) : {}) as Problem };
}

const jsonl = (rows: string[]) => rows.join("\n") + "\n";

async function upload(name: string, rows: string[]): Promise<{ status: number; problem: Problem; id?: string }> {
  const r = await rest("POST", `/datasets?name=${name}&format=jsonl`, jsonl(rows), "application/x-ndjson");
  return { ...r, id: (r.problem as unknown as { id?: string }).id };
}

function specWith(dataset: object, prompt: object = { field: "prompt", applyChatTemplate: false }) {
  const base = structuredClone(DEMO_SPEC_INPUT) as unknown as { name: string; datasets: object[]; environments: Record<string, unknown>[] };
  base.name = uniqueId("certain-failure");
  base.datasets = [dataset];
  base.environments = [{ ...base.environments[0]!, prompt }];
  return base;
}

async function nothingQueuedFor(name: string) {
  expect(await services.db.run.count({ where: { name } })).toBe(0);
  expect(await api.queue.count()).toBe(0);
}

describe("uploads: a lone surrogate in a value", () => {
  it("is refused at upload with its line and field (REST and tRPC), not stored", async () => {
    const name = uniqueId("surrogate").replace(/-/g, "_");
    const r = await upload(name, ['{"prompt":"fine","letter":"a"}', '{"prompt":"ok","letter":"b"}', '{"prompt":"bad \\ud800 here","letter":"c"}']);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.problem.errors?.[0]).toMatchObject({ line: 3 });
    expect(r.problem.errors?.[0]?.message).toMatch(/field "prompt" holds a lone UTF-16 surrogate/);
    expect(await services.db.dataset.count({ where: { name } })).toBe(0);

    const nested = await upload(name, ['{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"\\udfff"}]}']);
    expect(nested.problem.errors?.[0]).toMatchObject({ line: 1 });
    expect(nested.problem.errors?.[0]?.message).toMatch(/field "messages\.1\.content"/);

    // A well-formed pair (an emoji written as two escapes) is text, and uploads.
    const pair = await upload(name, ['{"prompt":"smile \\ud83d\\ude00","letter":"a"}']);
    expect(pair.status).toBe(201);
    await services.db.dataset.deleteMany({ where: { name } });

    const { caller } = await services.user("editor", "surrogate-ui");
    const content = Buffer.from(jsonl(['{"prompt":"a"}', '{"prompt":"\\ud800"}'])).toString("base64");
    await expect(caller.dataset.upload({ name: `${name}_ui`, format: "jsonl", contentBase64: content })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.dataset.upload({ name: `${name}_ui`, format: "jsonl", contentBase64: content })).rejects.toThrow(/line 2: field "prompt" holds a lone UTF-16 surrogate/);
  });
});

describe("launches: datasets that make the run certain to fail", () => {
  it("REST: a stored datasetId that does not exist is refused at its field; nothing is queued", async () => {
    const spec = specWith({ name: "letters", source: { kind: "stored", datasetId: "no-such-dataset", format: "jsonl" } });
    const r = await rest("POST", "/runs", JSON.stringify(spec), "application/json");
    expect(r.status).toBe(400);
    expect(r.problem.errors).toEqual([{ path: "datasets.0.source.datasetId", message: 'no uploaded dataset has id "no-such-dataset" (deleted?)' }]);
    await nothingQueuedFor(spec.name);
    // In an envelope, the path is under `spec.`.
    const envelope = await rest("POST", "/runs", JSON.stringify({ spec, priority: 1 }), "application/json");
    expect(envelope.problem.errors?.map((e) => e.path)).toEqual(["spec.datasets.0.source.datasetId"]);
    await nothingQueuedFor(spec.name);
  });

  it("REST and the UI launch: a prompt.field naming no column of an uploaded or builtin dataset is refused at environments.N.prompt.field", async () => {
    const name = uniqueId("columns").replace(/-/g, "_");
    const uploaded = await upload(name, ['{"question":"a?","letter":"a"}', '{"question":"b?","letter":"b"}']);
    expect(uploaded.status).toBe(201);
    try {
      const stored = specWith({ name: "letters", source: { kind: "stored", datasetId: uploaded.id, format: "jsonl" } });
      const r = await rest("POST", "/runs", JSON.stringify(stored), "application/json");
      expect(r.status).toBe(400);
      expect(r.problem.errors).toEqual([{ path: "environments.0.prompt.field", message: 'dataset "letters" has no column "prompt" (columns: letter, question)' }]);
      await nothingQueuedFor(stored.name);

      // Naming a column that exists launches.
      const good = specWith({ name: "letters", source: { kind: "stored", datasetId: uploaded.id, format: "jsonl" } }, { field: "question", applyChatTemplate: false });
      expect((await rest("POST", "/runs", JSON.stringify(good), "application/json")).status).toBe(201);
      const launched = await services.db.run.findFirstOrThrow({ where: { name: good.name }, select: { id: true } });
      services.runIds.push(launched.id);
      await api.queue.obliterate({ force: true });

      const builtin = specWith({ name: "letters", source: { kind: "builtin", name: "echo_letter", size: 16 } }, { field: "nope", applyChatTemplate: false });
      const b = await rest("POST", "/runs", JSON.stringify(builtin), "application/json");
      expect(b.problem.errors).toEqual([{ path: "environments.0.prompt.field", message: 'dataset "letters" has no column "nope" (columns: letter, prompt)' }]);
      await nothingQueuedFor(builtin.name);

      // A template does not read `field`: no column is needed for it.
      const templated = specWith({ name: "letters", source: { kind: "stored", datasetId: uploaded.id, format: "jsonl" } }, { field: "prompt", template: "Say {{ question }}", applyChatTemplate: false });
      expect((await rest("POST", "/runs", JSON.stringify(templated), "application/json")).status).toBe(201);
      const launchedTemplate = await services.db.run.findFirstOrThrow({ where: { name: templated.name }, select: { id: true } });
      services.runIds.push(launchedTemplate.id);
      await api.queue.obliterate({ force: true });

      // The UI's launch (an experiment holding the same spec) refuses the same field.
      const experimentId = await createExperiment(services, stored);
      const { caller } = await services.user("editor", "columns-ui");
      const refused = caller.experiment.launch({ experimentId });
      await expect(refused).rejects.toMatchObject({ code: "BAD_REQUEST" });
      await expect(caller.experiment.launch({ experimentId })).rejects.toThrow(/has no column "prompt"/);
      expect(await services.db.run.count({ where: { experimentId } })).toBe(0);
    } finally {
      await services.db.dataset.deleteMany({ where: { name } });
    }
  });
});
