import { DEMO_SPEC_INPUT, runEventStreamKey, runJobPriority, type RunEvent } from "@troupe/contracts";
import { listEventsAfter, readStreamAfter, storeEvents, transitionRun } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { operations } from "../src/features/api/server/operations";
import { createApiToken, revokeApiToken } from "../src/features/tokens/server/tokens";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { apiCaller, OpenApiChecker, type ApiResult } from "./helpers/openapi";
import { createExperiment, openServices, uniqueId, type TestServices } from "./helpers/services";

/**
 * The REST API over HTTP against real Postgres and Redis: every endpoint, auth, idempotency, YAML,
 * long-poll, CSV, size limits. Every response is checked against the served OpenAPI document.
 */

let services: TestServices;
let server: ApiServer;
let checker: OpenApiChecker;
let call: ReturnType<typeof apiCaller>;
let token: string;
let tokenId: string;
const tokenIds: string[] = [];
const datasetNames: string[] = [];

const spec = (overrides: Record<string, unknown> = {}) => ({ ...DEMO_SPEC_INPUT, name: uniqueId("api-run"), ...overrides });
const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { "content-type": "application/json" } });
const problem = (r: ApiResult) => r.json as { status: number; detail: string; errors?: { path: string; message: string; line?: number; column?: number }[] };

async function launch(body: unknown, headers: Record<string, string> = {}): Promise<ApiResult> {
  const r = await call("POST", "/runs", "/runs", { body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
  if (r.status === 201) services.runIds.push((r.json as { id: string }).id);
  return r;
}

beforeAll(async () => {
  services = openServices();
  server = await startApiServer({ isolateQueue: true });
  checker = await OpenApiChecker.load(server.baseUrl);
  const created = await services.apiToken("editor", "api-test-token");
  token = created.token;
  tokenId = created.tokenId;
  tokenIds.push(tokenId);
  call = apiCaller(server.baseUrl, checker, token);
});

afterAll(async () => {
  await server?.close();
  await services.db.idempotencyKey.deleteMany({ where: { tokenId: { in: tokenIds } } });
  await services.db.apiToken.deleteMany({ where: { id: { in: tokenIds } } });
  await services.db.dataset.deleteMany({ where: { name: { in: datasetNames } } });
  await services?.close();
});

describe("health, document and reference", () => {
  it("GET /health answers without a token and reports Postgres and Redis", async () => {
    const r = await call("GET", "/health", "/health", { token: null });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "ok", checks: { postgres: { ok: true }, redis: { ok: true } } });
  });

  it("serves an OpenAPI 3.1 document with every operation of the registry, and a reference page", async () => {
    expect(checker.doc.openapi).toBe("3.1.0");
    const paths = checker.doc.paths as Record<string, Record<string, { operationId: string }>>;
    for (const op of Object.values(operations)) expect(paths[op.path]?.[op.method]?.operationId).toBe(op.operationId);
    const docs = await fetch(`${server.baseUrl}/api/v1/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await docs.text();
    for (const op of Object.values(operations)) expect(html).toContain(`id="op-${op.operationId}"`);
    expect(html).toContain('id="schema-RunSpec"');
    expect(html).not.toMatch(/<script|https?:\/\/cdn/i);
  });

  it("answers an unknown endpoint with a problem+json 404", async () => {
    const r = await fetch(`${server.baseUrl}/api/v1/nope`);
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
  });
});

describe("auth", () => {
  const authed: [("GET" | "POST"), string, string][] = [
    ["GET", "/runs", "/runs"],
    ["POST", "/runs", "/runs"],
    ["GET", "/runs/x", "/runs/{id}"],
    ["GET", "/runs/x/wait?timeout=5", "/runs/{id}/wait"],
    ["GET", "/runs/x/metrics", "/runs/{id}/metrics"],
    ["GET", "/runs/x/episodes", "/runs/{id}/episodes"],
    ["POST", "/runs/x/cancel", "/runs/{id}/cancel"],
    ["POST", "/datasets?name=x", "/datasets"],
  ];

  it("every endpoint but health answers 401 without a token, with a bad one and with a revoked one, and writes nothing", async () => {
    const owner = await services.user("editor", "revoked");
    const revoked = await createApiToken(services.db, owner.id, uniqueId("revoked"));
    tokenIds.push(revoked.record.id);
    await revokeApiToken(services.db, revoked.record.id, null);
    const runsBefore = await services.db.run.count();
    const datasetsBefore = await services.db.dataset.count();
    for (const [method, path, template] of authed) {
      for (const bad of [null, "troupe_" + "A".repeat(43), revoked.token, "not-a-token"]) {
        const body = method === "POST" ? JSON.stringify(spec()) : undefined;
        const r = await call(method, path, template, { token: bad, body, headers: { "content-type": "application/json" } });
        expect(r.status, `${method} ${path} with ${bad}`).toBe(401);
        expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expect(problem(r).detail).not.toMatch(/at .*\.ts|Error:/);
      }
    }
    expect(await services.db.run.count()).toBe(runsBefore);
    expect(await services.db.dataset.count()).toBe(datasetsBefore);
    const revokedRow = await services.db.apiToken.findUniqueOrThrow({ where: { id: revoked.record.id } });
    expect(revokedRow.lastUsedAt).toBeNull();
  });

  it("records when a valid token was last used; the stored row holds no secret", async () => {
    await call("GET", "/runs?limit=1", "/runs");
    const row = await services.db.apiToken.findUniqueOrThrow({ where: { id: tokenId } });
    expect(row.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(token.slice(15));
    expect(token.startsWith(row.prefix)).toBe(true);
  });
});

describe("POST /runs", () => {
  it('a default launch (trainer.device "auto", no placement) claims one GPU per local model, through both doors (issue #25)', async () => {
    const [actor] = DEMO_SPEC_INPUT.actors;
    const auto = spec({ trainer: { ...DEMO_SPEC_INPUT.trainer, device: "auto" }, actors: [actor, { ...actor, name: "rival" }] });
    const r = await launch(auto);
    expect(r.status).toBe(201);
    const run = r.json as { id: string; gpus: number; gpuIds: number[] };
    expect(run).toMatchObject({ gpus: 2, gpuIds: [] }); // which ones: once a runner claims it
    expect((await server.queue.getJob(run.id))?.data).toEqual({ runId: run.id, gpus: 2 });
    const experimentId = await createExperiment(services, auto);
    const { runId } = await services.caller.experiment.launch({ experimentId });
    expect(await services.db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ gpus: 2, gpuIds: [] });
  });

  it("launches a bare JSON RunSpec exactly like the UI: frozen spec, queued event seq 1 (Postgres and stream), job id = run id", async () => {
    const r = await launch(spec());
    expect(r.status).toBe(201);
    const run = r.json as { id: string; status: string; source: string; spec: { trainer: { steps: number; evalEvery: number } } };
    expect(r.headers.get("location")).toBe(`/api/v1/runs/${run.id}`);
    expect(run).toMatchObject({ status: "queued", source: "api", terminal: false });
    expect(run.spec.trainer.evalEvery).toBe(0); // not in the posted spec: a default, filled in and frozen
    const row = await services.db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(row).toMatchObject({ source: "api", status: "queued", lastSeq: 1, gpus: 0 });
    const events = await listEventsAfter(services.db, run.id, 0, 10);
    expect(events).toEqual([expect.objectContaining({ seq: 1, type: "status", state: "queued" })]);
    expect(await readStreamAfter(services.redis, run.id, 0, 0)).toEqual(events);
    const job = await server.queue.getJob(run.id);
    expect(job?.data).toEqual({ runId: run.id, gpus: 0 });
  });

  it("accepts YAML, and the envelope's priority, tags and experimentId", async () => {
    const experimentId = await createExperiment(services);
    const body = toYaml({ spec: spec({ tags: ["nightly"] }), priority: 7, tags: ["ci", "nightly"], experimentId });
    const r = await call("POST", "/runs", "/runs", { body, headers: { "content-type": "application/yaml" } });
    expect(r.status).toBe(201);
    const run = r.json as { id: string; tags: string[]; priority: number; experimentId: string };
    services.runIds.push(run.id);
    expect(run).toMatchObject({ priority: 7, experimentId, tags: ["nightly", "ci"] });
    expect((await server.queue.getJob(run.id))?.opts.priority).toBe(runJobPriority({ priority: 7, attempt: 0 }));
  });

  it("names the line and column of a YAML syntax error and of each invalid field", async () => {
    const broken = await call("POST", "/runs", "/runs", { body: "specVersion: 1\nname: [unclosed\n", headers: { "content-type": "application/yaml" } });
    expect(broken.status).toBe(400);
    expect(problem(broken).errors?.[0]).toMatchObject({ path: "(root)", line: expect.any(Number), column: expect.any(Number) });
    expect(problem(broken).detail).toMatch(/YAML/);

    const yaml = toYaml({ ...spec(), trainer: { steps: -1, device: "cpu" }, seed: -3 });
    const invalid = await call("POST", "/runs", "/runs", { body: yaml, headers: { "content-type": "application/yaml" } });
    expect(invalid.status).toBe(400);
    const errors = problem(invalid).errors!;
    const lines = yaml.split("\n");
    const steps = errors.find((e) => e.path === "trainer.steps")!;
    expect(lines[steps.line! - 1]!.slice(steps.column! - 1)).toBe("-1");
    expect(lines[steps.line! - 2]).toMatch(/steps|trainer/);
    const seed = errors.find((e) => e.path === "seed")!;
    expect(lines[seed.line! - 1]).toMatch(/^seed: -3/);
  });

  it("reports every invalid field of a JSON spec, and unparseable JSON, as problem+json 400", async () => {
    const r = await launch({ ...spec(), actors: [], trainer: { steps: "many" } });
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(problem(r).errors!.map((e) => e.path).sort()).toEqual(["actors", "trainer.steps"]);
    const bad = await call("POST", "/runs", "/runs", { body: '{"specVersion": 1,,}', headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(problem(bad).detail).toMatch(/invalid JSON/);
    const envelope = await launch({ spec: spec(), priority: 101, experimentId: "no-such-experiment" });
    expect(envelope.status).toBe(400);
    expect(problem(envelope).errors!.map((e) => e.path)).toEqual(["priority"]);
    const experiment = await launch({ spec: spec(), experimentId: "no-such-experiment" });
    expect(problem(experiment).errors!.map((e) => e.path)).toEqual(["experimentId"]);
  });

  it("answers 413 over 1 MiB and 415 for a body that is neither JSON nor YAML", async () => {
    const big = await call("POST", "/runs", "/runs", { body: JSON.stringify({ ...spec(), description: "x".repeat(1024 * 1024) }), headers: { "content-type": "application/json" } });
    expect(big.status).toBe(413);
    expect(problem(big).detail).toMatch(/1 MiB/);
    const form = await call("POST", "/runs", "/runs", { body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(form.status).toBe(415);
  });

  it("Idempotency-Key: a retry gets the same run (JSON or YAML alike), another body with the key gets 409", async () => {
    const key = uniqueId("ci-job");
    const body = spec();
    const first = await launch(body, { "idempotency-key": key });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const id = (first.json as { id: string }).id;
    const retry = await launch(body, { "idempotency-key": key });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect((retry.json as { id: string }).id).toBe(id);
    const asYaml = await call("POST", "/runs", "/runs", { body: toYaml(body), headers: { "content-type": "application/yaml", "idempotency-key": key } });
    expect((asYaml.json as { id: string }).id).toBe(id);
    expect(await services.db.run.count({ where: { name: body.name } })).toBe(1);

    const other = await launch({ ...body, seed: 99 }, { "idempotency-key": key });
    expect(other.status).toBe(409);
    expect(problem(other).detail).toMatch(/different request body/);

    // Concurrent retries of a fresh key still make one run.
    const key2 = uniqueId("ci-job");
    const body2 = spec();
    const results = await Promise.all([1, 2, 3].map(() => launch(body2, { "idempotency-key": key2 })));
    expect(new Set(results.map((r) => (r.json as { id: string }).id)).size).toBe(1);
    expect(await services.db.run.count({ where: { name: body2.name } })).toBe(1);

    const badKey = await launch(spec(), { "idempotency-key": "has spaces in it" });
    expect(badKey.status).toBe(400);
    expect(problem(badKey).errors![0]!.path).toBe("Idempotency-Key");
  });
});

describe("reading runs", () => {
  it("lists with status, tag and experiment filters and cursor pagination; rejects unknown parameters", async () => {
    const tag = uniqueId("t");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await launch({ spec: spec(), tags: [tag] })).json as { id: string }).id);
    const page1 = await call("GET", `/runs?tag=${tag}&limit=2`, "/runs");
    const p1 = page1.json as { items: { id: string }[]; nextCursor: string };
    expect(p1.items.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    const page2 = await call("GET", `/runs?tag=${tag}&limit=2&cursor=${p1.nextCursor}`, "/runs");
    expect(page2.json).toMatchObject({ items: [{ id: ids[0] }], nextCursor: null });

    await call("POST", `/runs/${ids[0]}/cancel`, "/runs/{id}/cancel");
    const cancelled = await call("GET", `/runs?tag=${tag}&status=cancelled`, "/runs");
    expect((cancelled.json as { items: { id: string }[] }).items.map((r) => r.id)).toEqual([ids[0]]);
    const none = await call("GET", `/runs?tag=${tag}&experimentId=nope`, "/runs");
    expect((none.json as { items: unknown[] }).items).toEqual([]);

    const bad = await call("GET", "/runs?status=done&limit=0&colour=red", "/runs");
    expect(bad.status).toBe(400);
    expect(problem(bad).errors!.map((e) => e.path).sort()).toEqual(["(query)", "limit", "status"]);
  });

  it("GET /runs/{id}: the run with its frozen spec; 404 for an unknown id", async () => {
    const id = ((await launch(spec())).json as { id: string }).id;
    const r = await call("GET", `/runs/${id}`, "/runs/{id}");
    expect(r.json).toMatchObject({ id, status: "queued", url: `/runs/${id}` });
    const missing = await call("GET", "/runs/no-such-run", "/runs/{id}");
    expect(missing.status).toBe(404);
    expect(problem(missing).detail).toMatch(/no-such-run/);
  });
});

/** A run moved along by hand, the way a runner would: running, then events, then the end. */
async function startRun(): Promise<string> {
  const id = ((await launch(spec())).json as { id: string }).id;
  await services.queue.remove(id).catch(() => 0);
  await transitionRun(services.db, id, { from: ["queued"], to: "running" });
  return id;
}

describe("wait", () => {
  it("times out on a run that does not end, saying so", async () => {
    const id = ((await launch(spec())).json as { id: string }).id;
    const started = Date.now();
    const r = await call("GET", `/runs/${id}/wait?timeout=1`, "/runs/{id}/wait");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(r.json).toMatchObject({ done: false, timedOut: true, run: { id, status: "queued" } });
  });

  it("answers within about a second of the end, well before the timeout", async () => {
    const id = await startRun();
    setTimeout(() => void transitionRun(services.db, id, { from: ["running"], to: "succeeded" }), 800);
    const started = Date.now();
    const r = await call("GET", `/runs/${id}/wait?timeout=30`, "/runs/{id}/wait");
    const took = Date.now() - started;
    expect(r.json).toMatchObject({ done: true, timedOut: false, run: { id, status: "succeeded", terminal: true } });
    expect(took).toBeGreaterThanOrEqual(700);
    expect(took).toBeLessThan(5000);
    const bad = await call("GET", `/runs/${id}/wait?timeout=301`, "/runs/{id}/wait");
    expect(bad.status).toBe(400);
    expect(problem(bad).errors![0]!.path).toBe("timeout");
    expect((await call("GET", "/runs/no-such-run/wait?timeout=1", "/runs/{id}/wait")).status).toBe(404);
  });
});

describe("metrics and episodes", () => {
  let runId: string;
  beforeAll(async () => {
    runId = await startRun();
    const events: RunEvent[] = [];
    let seq = 3;
    for (let step = 1; step <= 30; step++) {
      events.push({ seq: seq++, ts: Date.now(), type: "metric", step, actor: "student", values: { "reward/mean": step / 30, loss: 1 / step } });
      events.push({ seq: seq++, ts: Date.now(), type: "metric", step, actor: "teacher", values: { "reward/mean": 0.5 } });
      for (let sample = 0; sample < 2; sample++) {
        events.push({
          seq: seq++, ts: Date.now(), type: "episode", step, environment: "echo", group: 0, sample,
          messages: [{ actor: "student", role: "assistant", content: `s${step}-${sample}, "quoted"`, trained: true }],
          reward: sample, rewardComponents: { letter_match: sample }, advantage: sample - 0.5,
        });
      }
    }
    await storeEvents(services.db, runId, events);
  });

  it("raw JSON series, filtered by name and actor; bucketed with buckets=N", async () => {
    const all = await call("GET", `/runs/${runId}/metrics`, "/runs/{id}/metrics");
    const series = (all.json as { series: { name: string; actor: string; total: number; bucketed: boolean; points: { step: number; value: number }[] }[] }).series;
    expect(series.map((s) => `${s.name}|${s.actor}`)).toEqual(["loss|student", "reward/mean|student", "reward/mean|teacher"]);
    expect(series.every((s) => s.points.length === 30 && !s.bucketed)).toBe(true);

    const one = await call("GET", `/runs/${runId}/metrics?name=reward/mean&actor=student&buckets=10`, "/runs/{id}/metrics");
    const [s] = (one.json as { series: typeof series }).series;
    expect((one.json as { series: unknown[] }).series).toHaveLength(1);
    expect(s).toMatchObject({ name: "reward/mean", actor: "student", total: 30, bucketed: true });
    expect(s!.points).toHaveLength(10);
    expect(s!.points.at(-1)).toEqual({ step: 30, value: 1, min: 28 / 30, max: 1 });

    const bad = await call("GET", `/runs/${runId}/metrics?format=xml&buckets=0`, "/runs/{id}/metrics");
    expect(problem(bad).errors!.map((e) => e.path).sort()).toEqual(["buckets", "format"]);
    expect((await call("GET", "/runs/no-such-run/metrics", "/runs/{id}/metrics")).status).toBe(404);
  });

  it("CSV: a header and one row per point", async () => {
    const r = await call("GET", `/runs/${runId}/metrics?format=csv&name=loss,reward/mean&actor=student`, "/runs/{id}/metrics");
    expect(r.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(r.headers.get("content-disposition")).toMatch(/attachment; filename=".*metrics\.csv"/);
    const rows = r.text.trimEnd().split("\r\n");
    expect(rows[0]).toBe("name,actor,step,value,min,max");
    expect(rows).toHaveLength(61);
    expect(rows[1]).toBe("loss,student,1,1,1,1");
    expect(rows.at(-1)).toBe("reward/mean,student,30,1,1,1");
  });

  it("episodes in event order with cursor pagination and a step filter", async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const path: string = `/runs/${runId}/episodes?limit=25${cursor ? `&cursor=${cursor}` : ""}`;
      const r = await call("GET", path, "/runs/{id}/episodes");
      const page = r.json as { items: { seq: number }[]; nextCursor: string | null };
      seen.push(...page.items.map((e) => e.seq));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(60);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    const step = await call("GET", `/runs/${runId}/episodes?step=7`, "/runs/{id}/episodes");
    const items = (step.json as { items: { step: number; sample: number; messages: { content: string }[] }[] }).items;
    expect(items.map((e) => [e.step, e.sample])).toEqual([[7, 0], [7, 1]]);
    expect(items[0]!.messages[0]!.content).toBe('s7-0, "quoted"');
    expect((await call("GET", `/runs/${runId}/episodes?cursor=abc`, "/runs/{id}/episodes")).status).toBe(400);
  });
});

describe("cancel", () => {
  it("cancels a queued run at once, requests a running one, and answers 409 for an ended one and 404 for none", async () => {
    const queued = ((await launch(spec())).json as { id: string }).id;
    const r = await call("POST", `/runs/${queued}/cancel`, "/runs/{id}/cancel");
    expect(r.json).toMatchObject({ outcome: "cancelled", run: { id: queued, status: "cancelled", terminal: true } });
    expect(await server.queue.getJob(queued)).toBeUndefined();
    const again = await call("POST", `/runs/${queued}/cancel`, "/runs/{id}/cancel");
    expect(again.status).toBe(409);

    const running = await startRun();
    const requested = await call("POST", `/runs/${running}/cancel`, "/runs/{id}/cancel");
    expect(requested.json).toMatchObject({ outcome: "requested", run: { status: "running", cancelRequested: true } });
    expect((await call("POST", "/runs/no-such-run/cancel", "/runs/{id}/cancel")).status).toBe(404);
  });
});

describe("POST /datasets", () => {
  const upload = (name: string, body: string, contentType: string, query = "") =>
    call("POST", `/datasets?name=${name}${query}`, "/datasets", { body, headers: { "content-type": contentType } });

  it("stores a valid JSONL and CSV file with row count and columns", async () => {
    const jsonlName = uniqueId("ds");
    datasetNames.push(jsonlName);
    const jsonl = await upload(jsonlName, '{"prompt":"say a","answer":"a"}\n\n{"prompt":"say b","answer":"b","extra":1}\n', "application/x-ndjson");
    expect(jsonl.status).toBe(201);
    expect(jsonl.json).toMatchObject({ name: jsonlName, format: "jsonl", rowCount: 2, columns: ["prompt", "answer", "extra"] });

    const csvName = uniqueId("ds");
    datasetNames.push(csvName);
    const csv = await upload(csvName, 'prompt,answer\r\n"say ""a"", then\nstop",a\r\nsay b,b\r\n', "text/csv");
    expect(csv.json).toMatchObject({ format: "csv", rowCount: 2, columns: ["prompt", "answer"] });
    const stored = await services.db.dataset.findFirstOrThrow({ where: { name: csvName } });
    expect(Buffer.from(stored.content!).toString("utf8")).toContain('"say ""a"", then');
  });

  it("names the line of the first malformed row and stores nothing", async () => {
    const name = uniqueId("ds");
    datasetNames.push(name);
    const jsonl = await upload(name, '{"a":1}\n{"a":2}\n{"a":\n{"a":4}\n', "application/jsonl");
    expect(jsonl.status).toBe(400);
    expect(problem(jsonl).errors![0]).toMatchObject({ line: 3 });
    expect(problem(jsonl).detail).toMatch(/line 3/);
    const notObject = await upload(name, '{"a":1}\n[1,2]\n', "application/jsonl");
    expect(problem(notObject).errors![0]).toMatchObject({ line: 2 });
    const csv = await upload(name, "a,b\n1,2\n\"x\ny\",2\n3\n", "text/csv");
    expect(problem(csv).errors![0]).toMatchObject({ line: 5 });
    expect(problem(csv).detail).toMatch(/1 field\(s\); the header has 2/);
    expect(await services.db.dataset.count({ where: { name } })).toBe(0);
  });

  it("answers 413 over 10 MiB, 415 without a known format, 400 for a bad name", async () => {
    const name = uniqueId("ds");
    datasetNames.push(name);
    const row = JSON.stringify({ prompt: "x".repeat(1000) }) + "\n";
    const big = await upload(name, row.repeat(Math.ceil((10 * 1024 * 1024) / row.length) + 1), "application/jsonl");
    expect(big.status).toBe(413);
    expect(await services.db.dataset.count({ where: { name } })).toBe(0);
    expect((await upload(name, "a\n1\n", "application/octet-stream")).status).toBe(415);
    expect((await upload(name, "a\n1\n", "application/octet-stream", "&format=csv")).status).toBe(201);
    expect((await upload("bad%20name", "a\n1\n", "text/csv")).status).toBe(400);
  });
});

describe("the document itself", () => {
  it("was used to check every status this suite saw", () => {
    const seen = new Set(checker.checked);
    for (const expected of ["POST /runs 201", "POST /runs 400", "POST /runs 401", "POST /runs 409", "POST /runs 413", "GET /runs/{id} 404", "GET /runs/{id}/metrics 200", "POST /datasets 201"]) {
      expect(seen.has(expected), expected).toBe(true);
    }
  });
});

// Keep the stream helper referenced for readers: runs created here live under these keys.
void runEventStreamKey;
