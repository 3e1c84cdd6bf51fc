import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiCollectResult, DEMO_SPEC_INPUT } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { startApiServer, type ApiServer } from "../../../apps/web/test/helpers/apiServer";
import { openServices, uniqueId, type TestServices } from "../../../apps/web/test/helpers/services";

/**
 * A pipeline in the CLI (#18): GRPO run -> `troupe collect` its episodes into a dataset -> an SFT run on that
 * dataset -> a GRPO run whose actor starts from the SFT run's checkpoint. The REST API over HTTP, a real
 * runner on the same Postgres and Redis, and the CPU runtime.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const bin = join(root, "packages/cli/bin/troupe.mjs");

let services: TestServices;
let server: ApiServer;
let runner: ChildProcess;
let runnerLog = "";
let dir: string;
let token: string;
let tokenId: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function troupe(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", TROUPE_URL: server.baseUrl, TROUPE_TOKEN: token, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
  });
}

function writeSpec(file: string, spec: unknown): string {
  const path = join(dir, file);
  writeFileSync(path, file.endsWith(".json") ? JSON.stringify(spec) : toYaml(spec));
  return path;
}

const demo = (steps: number, extra: Record<string, unknown> = {}) => ({
  ...DEMO_SPEC_INPUT,
  name: uniqueId("cli-pipe"),
  trainer: { ...DEMO_SPEC_INPUT.trainer, steps, promptsPerStep: 2, episodesPerStep: 1 },
  ...extra,
});

beforeAll(async () => {
  services = openServices();
  dir = mkdtempSync(join(tmpdir(), "troupe-cli-pipeline-"));
  server = await startApiServer({ isolateQueue: false });
  const created = await services.apiToken("editor", "cli-pipeline-test");
  token = created.token;
  tokenId = created.tokenId;
  runner = spawn(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), join(root, "apps/runner/src/main.ts")], {
    cwd: root,
    env: { ...process.env, HF_HUB_OFFLINE: "1", TROUPE_WORK_DIR: join(dir, "runs"), TROUPE_RUNNER_ID: uniqueId("cli-pipeline-runner"), TROUPE_CANCEL_GRACE_MS: "5000",
      // Not the queue reconciler: other test files' queued runs in the shared test database are not its to take.
      TROUPE_REQUEUE_CHECK_MS: "0" },
    detached: true,
  });
  runner.stdout?.on("data", (d) => (runnerLog += d));
  runner.stderr?.on("data", (d) => (runnerLog += d));
}, 60_000);

afterAll(async () => {
  if (runner?.pid && runner.exitCode === null) {
    const exited = new Promise((r) => runner.once("exit", r));
    process.kill(-runner.pid, "SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (runner.exitCode === null) process.kill(-runner.pid, "SIGKILL");
  }
  const runs = await services.db.run.findMany({ where: { source: "api", name: { startsWith: "cli-pipe-" } }, select: { id: true } });
  services.runIds.push(...runs.map((r) => r.id));
  await server?.close();
  await services.db.apiToken.deleteMany({ where: { id: tokenId } });
  await services?.close();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("collect -> SFT -> GRPO through the troupe CLI", () => {
  it("collects a finished run's episodes, trains SFT on them, then GRPO from the SFT checkpoint", async () => {
    const fail = (r: Result) => `${r.stderr}\nrunner:\n${runnerLog.slice(-3000)}`;
    // 1. An RL run whose recorded episodes are collected.
    const first = await troupe(["run", writeSpec("grpo.yaml", demo(4, { trainer: { ...DEMO_SPEC_INPUT.trainer, steps: 4, promptsPerStep: 2, episodesPerStep: 8 } })), "--wait"]);
    expect(first.code, fail(first)).toBe(0);
    const grpoRunId = first.stdout.trim();

    const none = await troupe(["collect", grpoRunId, "--name", uniqueId("cli_pipe_none").replace(/-/g, "_"), "--min-reward", "2"]);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/HTTP 400[\s\S]*minReward: no completion reached its threshold: the best of 32 episodes scored/);

    const name = uniqueId("cli_pipe_collected").replace(/-/g, "_");
    const collected = await troupe(["collect", grpoRunId, "--name", name, "--min-reward", "0", "--json"]);
    expect(collected.code, collected.stderr).toBe(0);
    const result = ApiCollectResult.parse(JSON.parse(collected.stdout));
    expect(result.dataset.columns.slice(0, 2)).toEqual(["prompt", "completion"]);
    expect(result.episodesScanned).toBe(32);
    expect(result.actors).toEqual([{ actor: "student", threshold: 0, scanned: 32, kept: result.dataset.rowCount }]);
    expect(result.dataset.rowCount).toBeGreaterThan(0);
    expect(collected.stderr).toMatch(new RegExp(`dataset "${name}" .*: ${result.dataset.rowCount} rows from 32 episodes`));

    // 2. SFT on the collected dataset: no reward, completions from the `completion` column.
    const sftSpec = demo(3, {
      algorithm: { name: "sft" },
      datasets: [result.datasetSpec],
      rewards: [],
      environments: [{ ...DEMO_SPEC_INPUT.environments[0], dataset: result.datasetSpec.name, rewards: [] }],
      trainer: { ...DEMO_SPEC_INPUT.trainer, steps: 3, promptsPerStep: 4, checkpointEvery: 3 },
    });
    const sft = await troupe(["run", writeSpec("sft.json", sftSpec), "--wait", "--fail-above", "loss=1e9", "--fail-below", "sft/token_accuracy=0"]);
    expect(sft.code, fail(sft)).toBe(0);
    const sftRunId = sft.stdout.trim();
    expect(sft.stderr).toMatch(/loss \[student\] at step 3 = .*: ok/);

    // 3. GRPO from the SFT run's checkpoint; a step it never saved is refused by field before queueing.
    const fromSft = (step: number) => demo(2, { actors: [{ ...DEMO_SPEC_INPUT.actors[0], model: { source: "run", runId: sftRunId, step } }] });
    const missing = await troupe(["run", writeSpec("missing.json", fromSft(99))]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/actors\.0\.model\.step: run .* has no checkpoint at step 99 \(it has steps 3\)/);
    const rl = await troupe(["run", writeSpec("rl.json", fromSft(3)), "--wait", "--fail-above", "loss=1e9"]);
    expect(rl.code, fail(rl)).toBe(0);
    const rlRunId = rl.stdout.trim();
    const logs = await services.db.runEvent.findMany({ where: { runId: rlRunId, type: "log" }, select: { payload: true } });
    expect(logs.map((l) => (l.payload as { message: string }).message).join("\n")).toContain(`run ${sftRunId} step 3 (student), full weights`);
  }, 300_000);
});
