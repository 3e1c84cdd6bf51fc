import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_SPEC_INPUT } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { startApiServer, type ApiServer } from "../../../apps/web/test/helpers/apiServer";
import { openServices, uniqueId, type TestServices } from "../../../apps/web/test/helpers/services";

/**
 * The `troupe` CLI's exit codes on real runs: the REST API over HTTP, a real runner (started here on
 * the same Postgres and Redis) and the CPU runtime training the demo for 3 steps.
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
  name: uniqueId("cli-run"),
  trainer: { ...DEMO_SPEC_INPUT.trainer, steps, promptsPerStep: 2, episodesPerStep: 1 },
  ...extra,
});

beforeAll(async () => {
  services = openServices();
  dir = mkdtempSync(join(tmpdir(), "troupe-cli-test-"));
  server = await startApiServer({ isolateQueue: false });
  const created = await services.apiToken("editor", "cli-test");
  token = created.token;
  tokenId = created.tokenId;
  runner = spawn(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), join(root, "apps/runner/src/main.ts")], {
    cwd: root,
    env: { ...process.env, HF_HUB_OFFLINE: "1", TROUPE_WORK_DIR: join(dir, "runs"), TROUPE_RUNNER_ID: uniqueId("cli-test-runner"), TROUPE_CANCEL_GRACE_MS: "5000",
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
  const runs = await services.db.run.findMany({ where: { source: "api", name: { startsWith: "cli-run-" } }, select: { id: true } });
  services.runIds.push(...runs.map((r) => r.id));
  await server?.close();
  await services.db.apiToken.deleteMany({ where: { id: tokenId } });
  await services?.close();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("troupe CLI against a real server and runner", () => {
  it("run --wait: 0 when the run succeeds and thresholds hold (metrics CSV written); 1 when a threshold is missed", async () => {
    const spec = writeSpec("spec.yaml", demo(3));
    const ok = await troupe(["run", spec, "--wait", "--fail-below", "reward_mean=-1", "--fail-above", "loss=1e9", "--metrics-out", "metrics.csv", "--idempotency-key", "job-1"]);
    expect(ok.code, `${ok.stderr}\nrunner:\n${runnerLog.slice(-3000)}`).toBe(0);
    const runId = ok.stdout.trim();
    expect(ok.stderr).toMatch(/succeeded/);
    expect(ok.stderr).toMatch(/reward\/mean \[student\] at step 3 = .*: ok/);
    const csv = readFileSync(join(dir, "metrics.csv"), "utf8").trimEnd().split("\r\n");
    expect(csv[0]).toBe("name,actor,step,value,min,max");
    expect(csv.filter((l) => l.startsWith("reward/mean,student,"))).toHaveLength(3);

    // A retried CI step (same key, same file) gets the same, finished run; now judged against a bar it misses.
    const missed = await troupe(["run", spec, "--wait", "--fail-below", "reward_mean=2", "--idempotency-key", "job-1"]);
    expect(missed.code, missed.stderr).toBe(1);
    expect(missed.stdout.trim()).toBe(runId);
    expect(missed.stderr).toMatch(/MISSED/);
    const notReported = await troupe(["run", spec, "--wait", "--fail-below", "accuracy=0.1", "--idempotency-key", "job-1"]);
    expect(notReported.code).toBe(1);

    const status = await troupe(["status", runId]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^run ${runId} \\([a-z]+-[a-z]+-\\d+\\) succeeded step 3/3`));
    const metrics = await troupe(["metrics", runId, "--csv", "--name", "loss"]);
    expect(metrics.code).toBe(0);
    expect(metrics.stdout.trimEnd().split("\r\n")).toHaveLength(4);
    const cancelEnded = await troupe(["cancel", runId]);
    expect(cancelEnded.code).toBe(3);
    expect(cancelEnded.stderr).toMatch(/HTTP 409/);
  }, 240_000); // the first run also waits for the runner and Python to start

  it("runs: lists runs by their generated names; delete removes an ended run and refuses a queued one", async () => {
    const ended = uniqueId("cli-run-ended");
    const queued = uniqueId("cli-run-queued");
    for (const [id, status] of [[ended, "succeeded"], [queued, "queued"]] as const) {
      // Rows only (no job, no runner): listing and deleting read and write the database alone.
      await services.db.run.create({ data: { id, name: id, spec: {}, specVersion: 1, seed: 0, status, source: "api" } });
      services.runIds.push(id);
    }
    const nameOf = async (id: string) => (await services.db.run.findUniqueOrThrow({ where: { id }, select: { displayName: true } })).displayName;
    const endedName = await nameOf(ended);
    expect(endedName).toMatch(/^[a-z]+-[a-z]+-\d+$/);

    const list = await troupe(["runs", "--limit", "100"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+STATUS\s+STEP\s+REWARD\s+CREATED\s+SPEC$/);
    expect(list.stdout).toMatch(new RegExp(`^${ended}\\s+${endedName}\\s+succeeded\\s`, "m"));
    const json = await troupe(["runs", "--status", "queued", "--limit", "100", "--json"]);
    const items = (JSON.parse(json.stdout) as { items: { id: string; name: string; specName: string }[] }).items;
    expect(items.find((r) => r.id === queued)).toMatchObject({ name: await nameOf(queued), specName: queued });
    expect(items.some((r) => r.id === ended)).toBe(false);

    const refused = await troupe(["delete", queued]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/HTTP 409.*cancel it first/s);
    const deleted = await troupe(["delete", ended]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`run ${ended} (${endedName}) deleted\n`);
    expect(await services.db.run.count({ where: { id: { in: [ended, queued] } } })).toBe(1);
  });

  it("run --wait: 2 when the run fails, and when it is cancelled", async () => {
    const failing = writeSpec("fail.json", demo(3, { datasets: [{ name: "letters", source: { kind: "file", path: "missing-rows.jsonl", format: "jsonl" } }] }));
    const failed = await troupe(["run", failing, "--wait", "--fail-below", "reward_mean=0"]);
    expect(failed.code, `${failed.stderr}\nrunner:\n${runnerLog.slice(-3000)}`).toBe(2);
    expect(failed.stderr).toMatch(/failed/);

    const long = writeSpec("long.yaml", demo(100_000));
    const launched = await troupe(["run", long, "--idempotency-key", "job-long"]);
    expect(launched.code).toBe(0);
    const runId = launched.stdout.trim();
    const cancel = await troupe(["cancel", runId]);
    expect(cancel.code, cancel.stderr).toBe(0);
    const waited = await troupe(["run", long, "--wait", "--idempotency-key", "job-long"]);
    expect(waited.code, waited.stderr).toBe(2);
    expect(waited.stderr).toMatch(/cancelled/);
  }, 180_000);

  it("pause, resume, stop after a step, then resume from its checkpoint to the end", async () => {
    // Enough steps that the commands arrive while it trains: a step is ~0.25 s on a loaded machine but
    // ~50 ms on an idle one, where 60 steps ended between the CLI's resume and stop.
    const total = 200;
    const spec = writeSpec("control.yaml", demo(total, { seed: 7 }));
    const launched = await troupe(["run", spec, "--idempotency-key", "job-control"]);
    expect(launched.code, launched.stderr).toBe(0);
    const runId = launched.stdout.trim();
    const row = () => services.db.run.findUniqueOrThrow({ where: { id: runId } });
    const until = async (what: string, probe: () => Promise<boolean>) => {
      const deadline = Date.now() + 120_000;
      while (!(await probe())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; runner:\n${runnerLog.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    await until("a first step", async () => ((await row()).lastStep ?? 0) >= 1);

    const pause = await troupe(["pause", runId]);
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toMatch(/pause requested/);
    await until("paused", async () => (await row()).status === "paused");
    const held = (await row()).lastStep;
    await new Promise((r) => setTimeout(r, 1500));
    expect((await row()).lastStep).toBe(held);
    expect((await troupe(["status", runId])).stdout).toMatch(new RegExp(`^run ${runId} \\([a-z]+-[a-z]+-\\d+\\) paused`));

    expect((await troupe(["resume", runId])).code).toBe(0);
    await until("running again", async () => (await row()).status === "running");
    const stop = await troupe(["stop", runId]);
    expect(stop.code, stop.stderr).toBe(0);
    await until("stopped", async () => (await row()).status === "stopped");
    const stoppedAt = (await row()).lastStep!;
    expect(stoppedAt).toBeLessThan(total);

    const resumed = await troupe(["resume", runId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`queued to resume from the checkpoint of step ${stoppedAt}`));
    const waited = await troupe(["run", spec, "--wait", "--idempotency-key", "job-control"]);
    expect(waited.code, `${waited.stderr}\nrunner:\n${runnerLog.slice(-3000)}`).toBe(0);
    const steps = await services.db.metricPoint.findMany({ where: { runId, name: "reward/mean" }, orderBy: { step: "asc" } });
    expect(steps.map((p) => p.step)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  }, 300_000);

  it("3 for usage, connection, token and request errors, with one clear line", async () => {
    const spec = writeSpec("ok.yaml", demo(3));
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["run", join(dir, "missing.yaml")], {}, /cannot read spec file .*missing\.yaml: ENOENT/],
      [["status", "x"], { TROUPE_URL: "http://127.0.0.1:1" }, /cannot reach http:\/\/127\.0\.0\.1:1/],
      [["status", "x"], { TROUPE_TOKEN: "troupe_" + "B".repeat(43) }, /HTTP 401.*TROUPE_TOKEN/],
      [["status", "no-such-run"], {}, /HTTP 404: run no-such-run not found/],
      [["run", spec, "--wait", "--fail-below", "nonsense"], {}, /expected METRIC=NUMBER/],
    ];
    for (const [args, env, message] of cases) {
      const r = await troupe(args, env);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toMatch(message);
    }
    const invalid = writeSpec("invalid.yaml", { ...demo(3), trainer: { steps: -1 } });
    const rejected = await troupe(["run", invalid, "--wait"]);
    expect(rejected.code).toBe(3);
    expect(rejected.stderr).toMatch(/HTTP 400/);
    expect(rejected.stderr).toMatch(/trainer\.steps \(line \d+, column \d+\): /);
  });
});
