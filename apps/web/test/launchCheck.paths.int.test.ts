import { DEMO_SPEC_INPUT } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FieldValidationError } from "../src/server/api/trpc";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { rejectionOf } from "./helpers/rejection";
import { createExperiment, openServices, uniqueId, type TestServices } from "./helpers/services";

/**
 * Every launch path runs the same pre-queue check (features/runs/lib/launchCheck.ts): a spec whose
 * round spec names an unknown actor, or whose Python reward does not parse, is refused with the
 * field's path by the REST API (what the CLI calls) and by the UI's launch, and nothing is queued.
 */

let services: TestServices;
let server: ApiServer;
let token: string;

const unknownActor = () => ({
  ...DEMO_SPEC_INPUT,
  name: uniqueId("bad-round-spec"),
  actors: [...DEMO_SPEC_INPUT.actors, { name: "Bob", model: { source: "tiny" }, trainable: false }],
  environments: [{ ...DEMO_SPEC_INPUT.environments[0], kind: "collaborative", actors: ["student", "Bob"], roundSpec: "student -> Carol" }],
});
const brokenReward = () => ({
  ...DEMO_SPEC_INPUT,
  name: uniqueId("bad-reward"),
  rewards: [{ name: "letter_match", source: { kind: "python", code: "def reward(prompt, completion):\n    return (1\n" } }],
});

async function post(body: unknown) {
  const response = await fetch(`${server.baseUrl}/api/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as { detail?: string; errors?: { path: string; message: string }[] } };
}

async function queuedJobs(): Promise<number> {
  return (await server.queue.getJobs(["prioritized", "waiting", "delayed", "active"])).length;
}

beforeAll(async () => {
  services = openServices();
  server = await startApiServer({ isolateQueue: true });
  token = (await services.apiToken("editor", "launch-check")).token;
});
afterAll(async () => {
  await server?.close();
  await services?.close();
});

describe("REST POST /runs", () => {
  it("refuses a round spec naming an unknown actor with 400 and the field path; nothing is stored or queued", async () => {
    const spec = unknownActor();
    const r = await post(spec);
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([{ path: "environments.0.roundSpec", message: expect.stringMatching(/Carol/) }]);
    expect(await services.db.run.count({ where: { name: spec.name } })).toBe(0);
    expect(await queuedJobs()).toBe(0);
  });

  it("refuses a reward with a Python syntax error, in the envelope form too (paths under spec.)", async () => {
    const r = await post({ spec: brokenReward(), priority: 10 });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([{ path: "spec.rewards.0.source.code", message: expect.stringMatching(/^line 3, column \d+: /) }]);
    expect(await queuedJobs()).toBe(0);
  });
});

describe("UI experiment.launch", () => {
  it("refuses the same spec with the same field path", async () => {
    const experimentId = await createExperiment(services, unknownActor());
    const error = await rejectionOf(services.caller.experiment.launch({ experimentId, overrides: {}, priority: 0 }));
    expect(error.code).toBe("BAD_REQUEST");
    expect((error.cause as FieldValidationError).issues.map((i) => i.path)).toEqual(["environments.0.roundSpec"]);
    expect(await services.db.run.count({ where: { experimentId } })).toBe(0);
  });
});

describe("designer parts", () => {
  it("an environment whose round spec names an unknown actor is not saved", async () => {
    const name = uniqueId("env").replace(/-/g, "_");
    const error = await rejectionOf(
      services.caller.part.create({ kind: "environment", description: "", spec: { name, kind: "collaborative", dataset: "letters", actors: ["Alice", "Bob"], rewards: [{ reward: "letter_match" }], roundSpec: "Alice -> Carol" } }),
    );
    expect(error.code).toBe("BAD_REQUEST");
    expect((error.cause as FieldValidationError).issues).toEqual([{ path: "spec.roundSpec", message: expect.stringMatching(/^line 1, column 10: .*Carol/) }]);
    expect(await services.db.designPart.count({ where: { name } })).toBe(0);
  });

  it("a reward whose Python does not parse is not saved", async () => {
    const name = uniqueId("rw").replace(/-/g, "_");
    const error = await rejectionOf(
      services.caller.part.create({ kind: "reward", description: "", spec: { name, source: { kind: "python", code: "def reward(p, c):\n    return 'oops\n" } } }),
    );
    expect((error.cause as FieldValidationError).issues).toEqual([{ path: "spec.source.code", message: "line 2, column 12: unterminated string literal" }]);
    expect(await services.db.designPart.count({ where: { name } })).toBe(0);
  });
});

describe("dashboard", () => {
  it("lists the shipped demos first, single-actor then multi-agent, however they were seeded", async () => {
    const { seedDemos, DEMO_EXPERIMENT_ID, MULTI_AGENT_DEMO_EXPERIMENT_ID } = await import("@troupe/db");
    await seedDemos(services.db);
    // Touch the single-actor demo so it is the older of the two by update time.
    await services.db.experiment.update({ where: { id: MULTI_AGENT_DEMO_EXPERIMENT_ID }, data: { description: "touched" } });
    const { items } = await services.caller.experiment.list({ limit: 50 });
    expect(items.slice(0, 2).map((e) => e.id)).toEqual([DEMO_EXPERIMENT_ID, MULTI_AGENT_DEMO_EXPERIMENT_ID]);
    await seedDemos(services.db); // puts the description back
  });
});
