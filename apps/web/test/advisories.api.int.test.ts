import type { AdvisoryEvent, RunEvent } from "@troupe/contracts";
import { appendToStream, storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { apiCaller, OpenApiChecker } from "./helpers/openapi";
import { createBareRun, openServices, type TestServices } from "./helpers/services";

/**
 * Health advisories through the REST API (`GET /api/v1/runs/{id}/advisories`) and tRPC (the run page's
 * panel, the runs tables' badges), against real Postgres and Redis: stored like every event, read back
 * with a viewer's token, filtered by severity and actor; answers checked against the served OpenAPI document.
 */

let services: TestServices;
let server: ApiServer;
let call: ReturnType<typeof apiCaller>;
let runId: string;
let quietRunId: string;

const advisory = (seq: number, over: Partial<AdvisoryEvent>): AdvisoryEvent => ({
  seq,
  ts: 1_790_000_000_000 + seq,
  type: "advisory",
  step: seq,
  actor: "student",
  kind: "collapse",
  severity: "warning",
  evidence: {
    summary: "Over steps 81-85, 5 different prompts got nearly the same answer: mostly 'b'.",
    fromStep: 81,
    toStep: 85,
    values: { dominant_char_share: 0.93 },
    episodes: [{ step: 85, environment: "relay", group: 0 }],
    examples: ["bbbbbbbb | bbbbbbbb"],
  },
  hint: "Lower the learning rate.",
  ...over,
});

beforeAll(async () => {
  services = openServices();
  server = await startApiServer({ isolateQueue: true });
  const checker = await OpenApiChecker.load(server.baseUrl);
  const { token } = await services.apiToken("viewer", "advisories-viewer");
  call = apiCaller(server.baseUrl, checker, token);
  runId = await createBareRun(services);
  quietRunId = await createBareRun(services);
  const events: RunEvent[] = [
    { seq: 2, ts: Date.now(), type: "metric", step: 1, actor: "student", values: { "reward/mean": 0.1 } },
    advisory(3, { kind: "zero_variance_groups", severity: "info", step: 5 }),
    advisory(4, {}),
    advisory(5, { kind: "non_finite", severity: "critical", actor: "partner", step: 90 }),
  ];
  let seq = 6;
  for (let step = 1; step <= 10; step++) {
    events.push({
      seq: seq++, ts: Date.now(), type: "episode", step, environment: "relay", group: 0, sample: 0,
      messages: [{ actor: "student", role: "assistant", content: `s${step}`, trained: true }], reward: 0, rewardComponents: {},
    });
  }
  await storeEvents(services.db, runId, events);
  await appendToStream(services.redis, runId, events);
});

afterAll(async () => {
  await server?.close();
  await services?.close();
});

type List = { items: (AdvisoryEvent & { actor: string | null; ts: string })[]; worst: string | null };

describe("GET /runs/{id}/advisories", () => {
  it("lists a run's advisories in order with evidence and hint, for a viewer's token", async () => {
    const r = await call("GET", `/runs/${runId}/advisories`, "/runs/{id}/advisories");
    expect(r.status).toBe(200);
    const body = r.json as List;
    expect(body.items.map((a) => [a.seq, a.kind, a.severity, a.actor, a.step])).toEqual([
      [3, "zero_variance_groups", "info", "student", 5],
      [4, "collapse", "warning", "student", 4],
      [5, "non_finite", "critical", "partner", 90],
    ]);
    expect(body.worst).toBe("critical");
    const collapse = body.items[1]!;
    expect(collapse.evidence).toMatchObject({ fromStep: 81, toStep: 85, episodes: [{ step: 85, environment: "relay", group: 0 }], examples: ["bbbbbbbb | bbbbbbbb"] });
    expect(collapse.hint).toBe("Lower the learning rate.");
    expect(collapse.ts).toBe(new Date(1_790_000_000_004).toISOString());
  });

  it("filters by least severity and by actor", async () => {
    const warn = (await call("GET", `/runs/${runId}/advisories?severity=warning`, "/runs/{id}/advisories")).json as List;
    expect(warn.items.map((a) => a.kind)).toEqual(["collapse", "non_finite"]);
    const partner = (await call("GET", `/runs/${runId}/advisories?actor=partner`, "/runs/{id}/advisories")).json as List;
    expect(partner.items.map((a) => a.kind)).toEqual(["non_finite"]);
    expect(partner.worst).toBe("critical");
  });

  it("answers an empty list for a healthy run, 404 for an unknown one, 400 naming a bad severity, 401 without a token", async () => {
    const quiet = (await call("GET", `/runs/${quietRunId}/advisories`, "/runs/{id}/advisories")).json as List;
    expect(quiet).toEqual({ items: [], worst: null });
    expect((await call("GET", "/runs/no-such-run/advisories", "/runs/{id}/advisories")).status).toBe(404);
    const bad = await call("GET", `/runs/${runId}/advisories?severity=loud`, "/runs/{id}/advisories");
    expect(bad.status).toBe(400);
    expect((bad.json as { errors: { path: string }[] }).errors[0]!.path).toBe("severity");
    const anonymous = await call("GET", `/runs/${runId}/advisories`, "/runs/{id}/advisories", { token: null });
    expect(anonymous.status).toBe(401);
  });
});

describe("transcripts of an advisory's step range", () => {
  it("run.transcripts keeps the steps from..to (inclusive), as the advisory's link asks", async () => {
    const { items } = await services.caller.run.transcripts({ runId, fromStep: 4, toStep: 6, actor: "student", limit: 50 });
    expect(items.map((e) => e.step).sort()).toEqual([4, 5, 6]);
  });
});

describe("tRPC advisory router", () => {
  it("the run page's list and the tables' per-run summaries (runs without advisories left out)", async () => {
    const viewer = await services.user("viewer", "advisories-trpc");
    const list = await viewer.caller.advisory.ofRun({ runId });
    expect(list.map((a) => a.kind)).toEqual(["zero_variance_groups", "collapse", "non_finite"]);
    expect(list[0]!.ts).toBeInstanceOf(Date);
    const summaries = await viewer.caller.advisory.summaries({ runIds: [runId, quietRunId] });
    expect(summaries).toEqual([{ runId, count: 3, worst: "critical", kinds: ["zero_variance_groups", "collapse", "non_finite"] }]);
    await expect(viewer.caller.advisory.ofRun({ runId: "no-such-run" })).rejects.toThrow(/not found/);
  });
});
