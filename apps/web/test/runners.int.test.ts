import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DEMO_SPEC_INPUT, QUEUES, RunSpec, RunnerGpu } from "@troupe/contracts";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FieldValidationError } from "../src/server/api/trpc";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { rejectionOf } from "./helpers/rejection";
import { createExperiment, openServices, serviceUrls, uniqueId, type TestServices } from "./helpers/services";

/**
 * Launch checks against live runners, over real runner processes (apps/runner/src/main.ts) heartbeating
 * into the real Postgres: their runtime is the runner tests' fake `troupe` package, whose
 * `capabilities --json` prints the host a test gives it (vLLM, which no machine here has). Checked: two
 * runners with different capabilities; a vLLM spec refused at launch (tRPC and REST) while no live runner
 * has vLLM and accepted once one has; a runner that stops heartbeating (SIGSTOP) leaves the offer; the
 * waiting reason of a queued run.
 */

const REPO = resolve(__dirname, "../../..");
const FAKE_RUNTIME = resolve(REPO, "apps/runner/test/fixtures/fake-runtime");
const GIB = 1024 ** 3;
const PRESENCE_MS = 1_000;

let services: TestServices;
let server: ApiServer;
let token: string;
let folder: string;
let defaultQueue: Queue;
let queueConnection: Redis;
const children: ChildProcess[] = [];
const runnerIds: string[] = [];

function host(id: string, over: { cuda?: string | null; gpus?: number; engines?: Record<string, string | null>; clusterKinds?: string[] }) {
  return {
    runtimeVersion: "0.1.0",
    hostname: id,
    python: "3.11.7",
    cuda: over.cuda ?? null,
    gpus: Array.from({ length: over.gpus ?? 0 }, (_, index) => ({ index, name: "NVIDIA H100 80GB HBM3", totalBytes: 80 * GIB, freeBytes: 78 * GIB, bf16: true })),
    cpuCount: 16,
    memoryBytes: 128 * GIB,
    engines: { torch: "2.8.0", transformers: "4.57.0", vllm: null, deepspeed: null, "liger-kernel": null, "flash-attn": null, peft: "0.17.1", ray: null, triton: "3.4.0", ...over.engines },
    trainBackends: ["torch", "fsdp2"],
    rolloutBackends: ["hf", "openai"],
    clusterKinds: over.clusterKinds ?? ["local"],
    precisions: ["fp32", "bf16"],
    sandbox: { usable: true, mode: "bwrap", detail: null },
  };
}

/** A real runner process reporting `caps` through the fake runtime. */
function startRunner(label: string, gpus: number, caps: ReturnType<typeof host>, concurrency = 1): { id: string; child: ChildProcess; output: string[] } {
  const id = uniqueId(label);
  runnerIds.push(id);
  const file = join(folder, `${id}.json`);
  writeFileSync(file, JSON.stringify(caps));
  const { databaseUrl, redisUrl } = serviceUrls();
  const child = spawn(process.execPath, ["--import", "tsx", "apps/runner/src/main.ts"], {
    cwd: REPO,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      TROUPE_RUNNER_ID: id,
      TROUPE_RUNNER_GPUS: String(gpus),
      TROUPE_RUNNER_CONCURRENCY: String(concurrency),
      TROUPE_PRESENCE_MS: String(PRESENCE_MS),
      // Never put back other test files' queued runs.
      TROUPE_REQUEUE_CHECK_MS: "0",
      TROUPE_SHUTDOWN_GRACE_MS: "2000",
      TROUPE_PYTHON: "python3",
      TROUPE_WORK_DIR: join(folder, id),
      PYTHONPATH: FAKE_RUNTIME,
      TROUPE_FAKE_CAPABILITIES: file,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout!.on("data", (b: Buffer) => output.push(b.toString()));
  child.stderr!.on("data", (b: Buffer) => output.push(b.toString()));
  children.push(child);
  return { id, child, output };
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const reported = (id: string) =>
  waitFor(`runner ${id} to report its capabilities`, async () => (await services.db.runner.findUnique({ where: { id } }))?.capabilities ?? null);

const hf = { source: "huggingface", id: "Qwen/Qwen2.5-0.5B-Instruct" };
const vllmSpec = (gpus: number[]) => ({
  ...DEMO_SPEC_INPUT,
  name: uniqueId("vllm-run"),
  actors: [{ ...DEMO_SPEC_INPUT.actors[0], model: hf, backend: "vllm", placement: { gpus } }],
  // The demo trains on the CPU (claims no GPUs); this one claims its placement's.
  trainer: { ...DEMO_SPEC_INPUT.trainer, device: "auto" },
});

async function restLaunch(spec: unknown): Promise<{ status: number; body: { id?: string; errors?: { path: string; message: string }[] } }> {
  const response = await fetch(`${server.baseUrl}/api/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(spec),
  });
  const body = (await response.json()) as { id?: string; errors?: { path: string; message: string }[] };
  if (body.id) services.runIds.push(body.id);
  return { status: response.status, body };
}

/** The `troupe` CLI (packages/cli/bin/troupe.mjs) against the test's API server. */
function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((ok) => {
    const child = spawn(process.execPath, [resolve(REPO, "packages/cli/bin/troupe.mjs"), ...args], {
      cwd: REPO,
      env: { ...process.env, TROUPE_URL: server.baseUrl, TROUPE_TOKEN: token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
    child.on("exit", (code) => ok({ code, stderr }));
  });
}

beforeAll(async () => {
  services = openServices();
  folder = mkdtempSync(join(tmpdir(), "troupe-runners-"));
  server = await startApiServer({ isolateQueue: true });
  token = (await services.apiToken("editor", "runners-test")).token;
  queueConnection = new Redis(serviceUrls().redisUrl, { maxRetriesPerRequest: null });
  // The runners' own queue (default prefix): the test puts one job there for a runner to hold a GPU.
  defaultQueue = new Queue(QUEUES.runs.name, { connection: queueConnection });
});

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill("SIGCONT");
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
  await services.db.runner.deleteMany({ where: { id: { in: runnerIds } } });
  await defaultQueue.close();
  await queueConnection.quit();
  await server?.close();
  await services.close();
  rmSync(folder, { recursive: true, force: true });
});

describe("launch checks against live runners", () => {
  it("refuses a vLLM spec while no live runner has vLLM, accepts it once one has, and refuses it again when that runner goes silent", async () => {
    // A runner another test file left live (a real CPU runtime: no CUDA, no vLLM) changes none of the checks below.
    const experimentId = await createExperiment(services, vllmSpec([0]));

    const gpuA = startRunner("gpu-a", 1, host("gpu-a", { cuda: "12.8", gpus: 1 }));
    const cpuB = startRunner("cpu-b", 0, host("cpu-b", { clusterKinds: ["local", "ray"], engines: { ray: "2.58.0" } }));
    await reported(gpuA.id);
    await reported(cpuB.id);

    // Two runners with different capabilities: neither has vLLM, so the launch is refused at the field, naming them.
    const refused = await rejectionOf(services.caller.experiment.launch({ experimentId }));
    expect(refused.code).toBe("BAD_REQUEST");
    const issues = (refused.cause as FieldValidationError).issues;
    expect(issues.map((i) => i.path)).toEqual(["actors.0.backend"]);
    expect(issues[0]!.message).toMatch(/^no runner has vLLM and a CUDA GPU; runners: /);
    expect(issues[0]!.message).toContain(`${gpuA.id} (torch 2.8.0, CUDA 12.8, 1 GPU NVIDIA H100 80GB HBM3 80 GiB)`);
    expect(issues[0]!.message).toContain(`${cpuB.id} (torch 2.8.0, no CUDA, Ray 2.58.0, no GPUs)`);
    // The REST API (and so the CLI) says the same, before anything is stored.
    const rest = await restLaunch(vllmSpec([0]));
    expect(rest.status).toBe(400);
    expect(rest.body.errors?.map((e) => e.path)).toEqual(["actors.0.backend"]);
    // ...and the CLI prints the field and the reason, exiting non-zero.
    const specFile = join(folder, "vllm.json");
    writeFileSync(specFile, JSON.stringify(vllmSpec([0])));
    const cli = await runCli(["run", specFile]);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/actors\.0\.backend: no runner has vLLM and a CUDA GPU; runners: /);
    expect(await services.db.run.count({ where: { experimentId } })).toBe(0);
    // The designer disables vLLM with the same reason; Ray is offered (cpu-b has it).
    const support = await services.caller.runner.support();
    expect(support.unavailable.vllm).toMatch(/^no live runner has vLLM and a CUDA GPU; runners: /);
    expect(support.unavailable.ray).toBeNull();

    // A runner with vLLM and two GPUs starts: the same launch is accepted, through both doors.
    const gpuC = startRunner("gpu-c", 2, host("gpu-c", { cuda: "12.8", gpus: 2, engines: { vllm: "0.11.0" } }), 2);
    await reported(gpuC.id);
    const { runId } = await services.caller.experiment.launch({ experimentId });
    expect((await services.db.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("queued");
    // Claiming more GPUs than any live runner has is refused at the launch's `gpus`.
    const greedy = await rejectionOf(services.caller.experiment.launch({ experimentId, gpus: 4 }));
    expect((greedy.cause as FieldValidationError).issues).toEqual([
      { path: "gpus", message: expect.stringMatching(/^claims 4 GPUs, but the largest live runner has 2; runners: /) as unknown as string },
    ]);
    expect((await restLaunch(vllmSpec([0, 1]))).status).toBe(201);
    expect((await services.caller.runner.support()).unavailable.vllm).toBeNull();

    // gpu-c stops heartbeating (frozen, not stopped): after RUNNER_MISSED_HEARTBEATS beats it is gone and vLLM is refused again.
    gpuC.child.kill("SIGSTOP");
    const gone = await waitFor("gpu-c to be shown as gone", async () => {
      const page = await services.caller.runner.list();
      return page.runners.find((r) => r.id === gpuC.id && r.state === "gone") ?? null;
    }, 30_000);
    expect(gone.engines).toContainEqual({ name: "vllm", version: "0.11.0" });
    const again = await rejectionOf(services.caller.experiment.launch({ experimentId }));
    expect((again.cause as FieldValidationError).issues.map((i) => i.path)).toEqual(["actors.0.backend"]);
    expect((again.cause as FieldValidationError).issues[0]!.message).not.toContain(gpuC.id);
    expect((await services.caller.runner.support()).unavailable.vllm).not.toBeNull();
    gpuC.child.kill("SIGCONT");
    await reported(gpuC.id);
    await waitFor("gpu-c live again", async () => (await services.caller.runner.list()).runners.find((r) => r.id === gpuC.id && r.state === "live") ?? null);
  });

  it("says why a queued run waits: a 2-GPU vLLM run while the only vLLM host has one GPU free", async () => {
    const page = await services.caller.runner.list();
    const gpuC = page.runners.find((r) => r.id.startsWith("gpu-c") && r.state === "live");
    expect(gpuC).toBeDefined();

    // A vLLM run takes one of gpu-c's GPUs: gpu-a and cpu-b hand its job back (no vLLM), gpu-c claims it and
    // holds GPU 0 while it runs (the fake runtime runs it; the `actors` it reads are what the runners match).
    const holder = await services.db.run.create({
      data: { name: uniqueId("holder"), spec: { fixture: { mode: "forever", stepMs: 100 }, actors: [{ backend: "vllm", placement: { gpus: [0] } }] }, specVersion: 1, seed: 1, status: "queued", gpus: 1, lastSeq: 1 },
    });
    services.runIds.push(holder.id);
    await defaultQueue.add("run", QUEUES.runs.jobs.run.parse({ runId: holder.id, gpus: 1 }), { jobId: holder.id });
    await waitFor("gpu-c to name the holder on a GPU", async () => {
      const row = await services.db.runner.findUniqueOrThrow({ where: { id: gpuC!.id } });
      return RunnerGpu.array().parse(row.gpus).some((g) => g.runId === holder.id);
    });

    const experimentId = await createExperiment(services, vllmSpec([0, 1]));
    const { runId } = await services.caller.experiment.launch({ experimentId });
    const view = await services.caller.runner.list();
    const holderNow = await services.db.run.findUniqueOrThrow({ where: { id: holder.id } });
    expect({ status: holderNow.status, error: holderNow.error }).toEqual({ status: "running", error: null });
    expect(view.queued.find((q) => q.id === runId)?.reason).toBe("needs 2 GPUs with vLLM; the largest free host has 1");
    // The run's own page says the same.
    expect(await services.caller.runner.whyWaiting({ runId })).toEqual({ reason: "needs 2 GPUs with vLLM; the largest free host has 1" });
    expect(await services.caller.runner.whyWaiting({ runId: holder.id })).toEqual({ reason: null }); // running: not waiting
    const shown = view.runners.find((r) => r.id === gpuC!.id)!;
    expect(shown.gpus.map((g) => g.runId)).toEqual([holder.id, null]);
    // By the run's own readable name, as everywhere runs are shown.
    expect(shown.gpus[0]!.runName).toBe(holder.displayName);
    expect(shown.runs.map((r) => r.id)).toEqual([holder.id]);
    // A runner not heard from in over a day is no longer listed (a retired host, a test's runner).
    const old = uniqueId("retired");
    runnerIds.push(old);
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await services.db.runner.create({
      data: { id: old, host: old, cpuCount: 1, memoryBytes: GIB, concurrency: 1, heartbeatMs: 10_000, startedAt: twoDaysAgo, lastHeartbeatAt: twoDaysAgo },
    });
    expect((await services.caller.runner.list()).runners.map((r) => r.id)).not.toContain(old);
    // The holder's job leaves the runners' queue with the run.
    await (await defaultQueue.getJob(holder.id))?.remove().catch(() => undefined);
    expect(RunSpec.safeParse(vllmSpec([0, 1])).success).toBe(true);
  });
});
