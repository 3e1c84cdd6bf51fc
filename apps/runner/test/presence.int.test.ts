import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QUEUES, RunnerCapabilities, RunnerGpu } from "@troupe/contracts";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryLog } from "../src/log";
import { parseGpuMemory } from "../src/presence/gpuMemory";
import { startRunner, type Runner } from "../src/runner";
import { createQueuedRun, FAKE_RUNTIME_PATH, openServices, serviceUrls, testEnv, uniqueId, waitFor, type TestServices } from "./helpers/services";

/**
 * The runner's presence: its Runner row carries what the runtime's `capabilities --json` said (here the
 * fake runtime's, naming a vLLM host no machine here is), its GPUs with the run holding each, a fresh
 * heartbeat, and `stoppedAt` after a clean shutdown.
 */

const GIB = 1024 ** 3;
let services: TestServices;
let queueConnection: Redis;
let queue: Queue;
let folder: string;
const prefix = uniqueId("troupe-test-bull");
const runnerIds: string[] = [];

const vllmHost = {
  runtimeVersion: "0.1.0",
  hostname: "gpu-c",
  python: "3.11.7",
  cuda: "12.8",
  gpus: [0, 1].map((index) => ({ index, name: "NVIDIA H100 80GB HBM3", totalBytes: 80 * GIB, freeBytes: 79 * GIB, bf16: true })),
  cpuCount: 16,
  memoryBytes: 128 * GIB,
  engines: { torch: "2.8.0", vllm: "0.11.0", deepspeed: null, "liger-kernel": null, "flash-attn": "2.8.3", peft: "0.17.1", ray: null, triton: "3.4.0" },
  trainBackends: ["torch", "fsdp2"],
  rolloutBackends: ["hf", "openai", "vllm"],
  clusterKinds: ["local"],
  precisions: ["fp32", "bf16"],
  sandbox: { usable: true, mode: "bwrap", detail: "bubblewrap" },
};

beforeAll(() => {
  services = openServices();
  queueConnection = new Redis(serviceUrls().redisUrl, { maxRetriesPerRequest: null });
  queue = new Queue(QUEUES.runs.name, { connection: queueConnection, prefix });
  folder = mkdtempSync(join(tmpdir(), "troupe-presence-"));
});
afterAll(async () => {
  await services.db.runner.deleteMany({ where: { id: { in: runnerIds } } });
  await queue.obliterate({ force: true });
  await queue.close();
  await queueConnection.quit();
  await services.close();
  rmSync(folder, { recursive: true, force: true });
});

describe("runner presence", () => {
  let runner: Runner | null = null;
  afterAll(async () => {
    await runner?.shutdown("test end");
  });

  it("publishes its capabilities, GPUs and which run holds each on a heartbeat, and says when it stopped", async () => {
    const file = join(folder, "caps.json");
    writeFileSync(file, JSON.stringify(vllmHost));
    const env = testEnv(services, { gpus: 2, presenceMs: 200 });
    runnerIds.push(env.runnerId);
    runner = await startRunner(env, {
      log: memoryLog(),
      queuePrefix: prefix,
      reconcileQueue: false,
      childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH, TROUPE_FAKE_CAPABILITIES: file },
    });
    const row = await waitFor("the capabilities", async () => {
      const r = await services.db.runner.findUnique({ where: { id: env.runnerId } });
      return r?.capabilities ? r : null;
    });
    const caps = RunnerCapabilities.parse(row.capabilities);
    expect(caps.engines.vllm).toBe("0.11.0");
    expect(row).toMatchObject({ concurrency: 1, heartbeatMs: 200, stoppedAt: null, probeError: null });
    expect(row.gpus).toEqual([
      { index: 0, name: "NVIDIA H100 80GB HBM3", totalBytes: 80 * GIB, freeBytes: 79 * GIB, runId: null },
      { index: 1, name: "NVIDIA H100 80GB HBM3", totalBytes: 80 * GIB, freeBytes: 79 * GIB, runId: null },
    ]);

    // A run that takes one GPU: the next beat names it as the GPU's holder.
    const runId = await createQueuedRun(services, { fixture: { mode: "forever", stepMs: 50 } }, { gpus: 1 });
    await queue.add("run", QUEUES.runs.jobs.run.parse({ runId, gpus: 1 }), { jobId: runId });
    const held = await waitFor("GPU 0 held by the run", async () => {
      const r = await services.db.runner.findUniqueOrThrow({ where: { id: env.runnerId } });
      const gpus = RunnerGpu.array().parse(r.gpus);
      return gpus[0]?.runId === runId ? { gpus, at: r.lastHeartbeatAt } : null;
    });
    expect(held.gpus[1]?.runId).toBeNull();
    // The heartbeat moves on.
    await waitFor("a later heartbeat", async () =>
      (await services.db.runner.findUniqueOrThrow({ where: { id: env.runnerId } })).lastHeartbeatAt > held.at ? true : null,
    );

    const stopping = runner;
    runner = null;
    await stopping.shutdown("test");
    const stopped = await services.db.runner.findUniqueOrThrow({ where: { id: env.runnerId } });
    expect(stopped.stoppedAt).not.toBeNull();
    expect(RunnerGpu.array().parse(stopped.gpus).every((g) => g.runId === null)).toBe(true);
  });

  it("runs on without capabilities when the runtime cannot report them, saying why", async () => {
    const env = testEnv(services, { presenceMs: 200 });
    runnerIds.push(env.runnerId);
    runner = await startRunner(env, { log: memoryLog(), queuePrefix: prefix, reconcileQueue: false, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH } });
    const row = await waitFor("the probe's failure", async () => {
      const r = await services.db.runner.findUnique({ where: { id: env.runnerId } });
      return r?.probeError ? r : null;
    });
    expect(row.capabilities).toBeNull();
    expect(row.probeError).toMatch(/troupe capabilities failed: .*invalid choice: 'capabilities'/);
  });

  it("probes its capabilities again while it runs: an engine installed since start reaches its row without a restart", async () => {
    const file = join(folder, "caps-later.json");
    const noBwrap = { usable: false, mode: null, detail: "bwrap not found on PATH" };
    writeFileSync(file, JSON.stringify({ ...vllmHost, engines: { ...vllmHost.engines, vllm: null }, sandbox: noBwrap }));
    const env = testEnv(services, { presenceMs: 200, capabilitiesMs: 500 });
    runnerIds.push(env.runnerId);
    const log = memoryLog();
    const later = await startRunner(env, { log, queuePrefix: prefix, reconcileQueue: false, childEnv: { PYTHONPATH: FAKE_RUNTIME_PATH, TROUPE_FAKE_CAPABILITIES: file } });
    try {
      const engineOf = async () => {
        const r = await services.db.runner.findUnique({ where: { id: env.runnerId } });
        return r?.capabilities ? RunnerCapabilities.parse(r.capabilities).engines : null;
      };
      await waitFor("the first probe", engineOf);
      expect((await engineOf())!.vllm).toBeNull();
      writeFileSync(file, JSON.stringify(vllmHost)); // vLLM installed on the live host
      await waitFor("vLLM in the runner row", async () => ((await engineOf())?.vllm === "0.11.0" ? true : null));
      expect(log.lines.filter((l) => l.startsWith("INFO capabilities changed:"))).toHaveLength(1);
      expect(log.lines.find((l) => l.startsWith("INFO capabilities changed:"))).toContain("vllm 0.11.0");
      // Whether user code can run is said at start, and when it changes (bubblewrap installed meanwhile).
      expect(log.lines.find((l) => l.startsWith("INFO capabilities:"))).toContain(
        "NO SANDBOX (bwrap not found on PATH): Python rewards, code and tools environments are refused on this runner",
      );
      expect(log.lines.find((l) => l.startsWith("INFO capabilities changed:"))).toContain("sandbox bwrap");
    } finally {
      await later.shutdown("test");
    }
  });

  it("reads nvidia-smi's memory table", () => {
    expect(parseGpuMemory("0, NVIDIA H100 80GB HBM3, 81559, 80000\n1, NVIDIA H100 80GB HBM3, 81559, 1024\n")).toEqual([
      { index: 0, name: "NVIDIA H100 80GB HBM3", totalBytes: 81559 * 1024 * 1024, freeBytes: 80000 * 1024 * 1024 },
      { index: 1, name: "NVIDIA H100 80GB HBM3", totalBytes: 81559 * 1024 * 1024, freeBytes: 1024 * 1024 * 1024 },
    ]);
  });
});
