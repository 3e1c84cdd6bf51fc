import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_SPEC_INPUT } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { openServices, uniqueId, type TestServices } from "./helpers/services";

/**
 * Issue 30 at launch: an API actor may name as its key only a variable the runner's operator lists
 * (TROUPE_ACTOR_KEY_ENVS; Troupe's own secrets never), call only a listed host (TROUPE_API_HOSTS), and a file
 * dataset or local model must lie under a listed data root (TROUPE_DATA_ROOTS). The REST launch refuses
 * the rest by field before anything is queued (a root-only file made by the test, and a link to it); the
 * loopback server the spec points at hears nothing.
 */

let services: TestServices;
let server: ApiServer;
let token: string;
let loopback: Server;
let loopbackUrl: string;
let heard = 0;
let folder: string;
const runnerId = uniqueId("policy-runner");

const apiActorSpec = (apiKeyEnv: string, dataset?: string) => ({
  ...DEMO_SPEC_INPUT,
  name: uniqueId("api-actor"),
  actors: [
    ...DEMO_SPEC_INPUT.actors,
    { name: "Bob", model: { source: "tiny" }, backend: "openai", trainable: false, api: { baseUrl: loopbackUrl, model: "m", apiKeyEnv } },
  ],
  datasets: dataset ? [{ ...DEMO_SPEC_INPUT.datasets[0], source: { kind: "file", path: dataset, format: "jsonl" } }] : DEMO_SPEC_INPUT.datasets,
  environments: [{ ...DEMO_SPEC_INPUT.environments[0], kind: "collaborative", actors: ["student", "Bob"], roundSpec: "student -> Bob" }],
});

async function post(body: unknown) {
  const response = await fetch(`${server.baseUrl}/api/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as { errors?: { path: string; message: string }[] } };
}
const queuedJobs = async () => (await server.queue.getJobs(["prioritized", "waiting", "delayed", "active"])).length;

beforeAll(async () => {
  services = openServices();
  server = await startApiServer({ isolateQueue: true });
  token = (await services.apiToken("editor", "host-policy")).token;
  folder = mkdtempSync(join(tmpdir(), "troupe-policy-"));
  loopback = createServer((req, res) => {
    heard += 1;
    res.end("{}");
  });
  await new Promise<void>((resolve) => loopback.listen(0, "127.0.0.1", resolve));
  const address = loopback.address();
  loopbackUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/v1`;
});
afterAll(async () => {
  await services?.db.runner.deleteMany({ where: { id: runnerId } });
  loopback?.close();
  rmSync(folder, { recursive: true, force: true });
  await server?.close();
  await services?.close();
});

describe("launching a spec that reaches past the runner's policy", () => {
  it("refuses TROUPE_ADMIN_PASSWORD as an API actor's key, live runner or not; nothing is queued or sent", async () => {
    const r = await post(apiActorSpec("TROUPE_ADMIN_PASSWORD"));
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([{ path: "actors.1.api.apiKeyEnv", message: expect.stringMatching(/Troupe's own secrets.*TROUPE_ACTOR_KEY_ENVS/) }]);
    expect(await queuedJobs()).toBe(0);
    expect(heard).toBe(0);
  });

  it("refuses an unlisted key variable, an unlisted host and a root-only file by field, naming the variable to set", async () => {
    const now = new Date();
    await services.db.runner.create({
      data: {
        id: runnerId, host: runnerId, cpuCount: 2, memoryBytes: 8e9, concurrency: 1, heartbeatMs: 2_000, startedAt: now, lastHeartbeatAt: now, gpus: [], // live for 6 s only: other files share this database
        capabilities: {
          runtimeVersion: "0.1.0", python: "3.11", cuda: null, gpus: [], cpuCount: 2, memoryBytes: 8e9,
          engines: { torch: "2.13.0", peft: "0.17" }, trainBackends: ["torch"], rolloutBackends: ["hf", "openai"], clusterKinds: ["local"],
          precisions: ["fp32"], sandbox: { usable: true, mode: "bwrap", detail: null },
          hostPolicy: { actorKeyEnvs: ["OPENAI_API_KEY"], apiHosts: ["api.openai.com"], dataRoots: ["/srv/troupe-data"] },
        },
      },
    });
    const secret = join(folder, "shadow.jsonl");
    writeFileSync(secret, '{"prompt": "root:$y$not-a-real-hash"}\n');
    chmodSync(secret, 0o600);
    const link = join(folder, "innocent.jsonl");
    symlinkSync(secret, link);
    const r = await post(apiActorSpec("AWS_SECRET_ACCESS_KEY", secret));
    const viaLink = await post(apiActorSpec("OPENAI_API_KEY", link));
    await services.db.runner.deleteMany({ where: { id: runnerId } });
    // A link outside the roots is refused as any path there; one planted under a root the web cannot see
    // through: the runtime resolves it before opening (gpu-runtime/tests/test_host_policy.py).
    expect(viaLink.status).toBe(400);
    expect(viaLink.json.errors?.map((e) => e.path)).toEqual(["actors.1.api.baseUrl", "datasets.0.source.path"]);
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      { path: "actors.1.api.apiKeyEnv", message: expect.stringMatching(new RegExp(`TROUPE_ACTOR_KEY_ENVS .*${runnerId}: OPENAI_API_KEY`)) },
      { path: "actors.1.api.baseUrl", message: expect.stringMatching(/host 127\.0\.0\.1 .*TROUPE_API_HOSTS/) },
      { path: "datasets.0.source.path", message: expect.stringMatching(/outside every data root.*TROUPE_DATA_ROOTS/) },
    ]);
    expect(JSON.stringify(r.json)).not.toContain("not-a-real-hash");
    expect(await queuedJobs()).toBe(0);
    expect(heard).toBe(0);
  });
});
