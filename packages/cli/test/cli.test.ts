import { describe, expect, it } from "vitest";
import { ApiRunWait } from "@troupe/contracts";
import { parseCommand } from "../src/args";
import { parseAnswer } from "../src/client";
import { CliError, EXIT } from "../src/exitCodes";
import { main } from "../src/main";
import { checkThresholds, parseThreshold } from "../src/thresholds";

const env = { TROUPE_URL: "http://127.0.0.1:9", TROUPE_TOKEN: "troupe_x" };

function usageError(argv: string[], e: Record<string, string | undefined> = env): CliError {
  try {
    parseCommand(argv, e);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return error as CliError;
  }
  throw new Error("expected a usage error");
}

describe("arguments", () => {
  it("parses run with thresholds, actor, metrics file and launch options; URL and token from env or flags", () => {
    const command = parseCommand(
      ["run", "spec.yaml", "--wait", "--fail-below", "reward_mean=0.5", "--fail-above", "loss=2", "--actor", "student", "--metrics-out", "m.csv", "--tag", "ci", "--priority", "5"],
      env,
    );
    expect(command).toMatchObject({
      name: "run",
      specPath: "spec.yaml",
      wait: true,
      actor: "student",
      metricsOut: "m.csv",
      tags: ["ci"],
      priority: 5,
      common: { url: env.TROUPE_URL, token: env.TROUPE_TOKEN },
      thresholds: [
        { metric: "reward_mean", kind: "below", value: 0.5 },
        { metric: "loss", kind: "above", value: 2 },
      ],
    });
    expect(parseCommand(["status", "r1", "--url", "https://t.example", "--token", "tok"], {})).toMatchObject({
      common: { url: "https://t.example", token: "tok" },
    });
  });

  it("parses collect with per-actor thresholds", () => {
    expect(
      parseCommand(["collect", "r1", "--name", "good", "--min-reward", "0.5", "--min-reward-for", "Bob=0.8", "--actor", "Bob", "--from-step", "10", "--keep-duplicates"], env),
    ).toMatchObject({
      name: "collect",
      runId: "r1",
      datasetName: "good",
      minReward: 0.5,
      minRewardByActor: { Bob: 0.8 },
      actors: ["Bob"],
      fromStep: 10,
      dedupe: false,
      json: false,
    });
  });

  it("says what is wrong, in one line, with exit code 3", () => {
    const cases: [string[], RegExp, Record<string, string | undefined>?][] = [
      [["launch"], /unknown command "launch"/],
      [["run"], /missing the spec file/],
      [["run", "a.yaml", "--fail-below", "reward_mean"], /expected METRIC=NUMBER/],
      [["run", "a.yaml", "--wait", "--fail-below", "reward_mean=high"], /"high" is not a number/],
      [["run", "a.yaml", "--fail-below", "reward_mean=1"], /need --wait/],
      [["run", "a.yaml", "--colour"], /Unknown option '--colour'/],
      [["run", "a.yaml", "--priority", "500"], /--priority "500": must be a whole number from 0 to 100/],
      [["status", "r1"], /no server URL/, { TROUPE_TOKEN: "t" }],
      [["status", "r1"], /no API token/, { TROUPE_URL: "http://x" }],
      [["status", "r1"], /must be an http/, { TROUPE_URL: "ftp://x", TROUPE_TOKEN: "t" }],
      [["cancel", "a", "b"], /unexpected argument "b"/],
      [["delete"], /troupe delete: missing the run id/],
      [["runs", "extra"], /troupe runs: unexpected argument "extra"/],
      [["runs", "--limit", "500"], /--limit "500": must be a whole number from 1 to 100/],
      [["collect", "r1", "--min-reward", "1"], /--name NAME is required/],
      [["collect", "r1", "--name", "d"], /--min-reward X is required/],
      [["collect", "r1", "--name", "d", "--min-reward", "x"], /--min-reward "x": must be a number/],
      [["collect", "r1", "--name", "d", "--min-reward", "1", "--min-reward-for", "Bob"], /must be ACTOR=VALUE/],
    ];
    for (const [argv, message, e] of cases) {
      const error = usageError(argv, e ?? env);
      expect(error.message, argv.join(" ")).toMatch(message);
      expect(error.code).toBe(EXIT.usage);
      expect(error.message).not.toContain("\n");
    }
  });

  it("main returns 3 for a usage error and 0 for --help, printing to the given streams", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) };
    expect(await main(["bogus"], env, io)).toBe(3);
    expect(err).toEqual(['troupe: error: unknown command "bogus" (commands: run, runs, status, metrics, cancel, delete, pause, resume, stop, collect; see troupe --help)']);
    expect(await main(["--help"], {}, io)).toBe(0);
    expect(out.join("")).toMatch(/exit codes: 0 ok; 1 a threshold was missed/);
  });
});

describe("thresholds", () => {
  const series = [
    { name: "reward/mean", actor: "student", points: [{ step: 1, value: 0.2 }, { step: 3, value: 0.6 }, { step: 2, value: 0.9 }] },
    { name: "reward/mean", actor: "teacher", points: [{ step: 3, value: 0.4 }] },
    { name: "loss", actor: "student", points: [{ step: 3, value: 1.5 }] },
  ];

  it("compares the value at the last step; `_` stands for `/`; every actor must pass unless one is named", () => {
    const all = checkThresholds([parseThreshold("reward_mean=0.5", "below")], series);
    expect(all.map((r) => [r.actor, r.final, r.ok])).toEqual([["student", 0.6, true], ["teacher", 0.4, false]]);
    const student = checkThresholds([parseThreshold("reward/mean=0.5", "below")], series, "student");
    expect(student.map((r) => r.ok)).toEqual([true]);
    expect(checkThresholds([parseThreshold("loss=1.5", "above")], series)[0]!.ok).toBe(true);
    expect(checkThresholds([parseThreshold("loss=1.4", "above")], series)[0]!.ok).toBe(false);
  });

  it("counts a metric the run never reported as missed", () => {
    const [r] = checkThresholds([parseThreshold("accuracy=0.1", "below")], series);
    expect(r).toMatchObject({ ok: false, final: null });
    expect(r!.line).toMatch(/accuracy: not reported/);
  });
});

describe("answers", () => {
  const answer = (body: unknown, status = 200) => ({ status, headers: new Headers(), text: typeof body === "string" ? body : JSON.stringify(body) });
  const run = {
    id: "r1",
    name: "brisk-otter-17",
    specName: "demo",
    status: "running",
    experimentId: null,
    experimentName: null,
    createdAt: "2026-11-23T10:00:00.000Z",
    startedAt: "2026-11-23T10:00:01.000Z",
    finishedAt: null,
    lastStep: 2,
    totalSteps: 10,
    lastReward: 0.5,
    specVersion: 1,
    seed: 0,
    priority: 0,
    gpus: 0,
    tags: [],
    source: "api",
    error: null,
    terminal: false,
    cancelRequested: false,
    url: "/runs/r1",
  };

  it("reads a JSON answer with the API's schema (the one the server's OpenAPI document is made from)", () => {
    const wait = parseAnswer(ApiRunWait, "GET", "/runs/r1/wait", answer({ run, done: false, timedOut: true, waitedMs: 30000 }));
    expect(wait.run.lastStep).toBe(2);
    expect(wait.timedOut).toBe(true);
  });

  it("names the field when the server answers something else, in one line, with exit code 3", () => {
    const cases: [unknown, RegExp][] = [
      [{ run: { ...run, status: "sleeping" }, done: false, timedOut: true, waitedMs: 1 }, /GET \/runs\/r1\/wait: .*\(run\.status: /],
      [{ run, timedOut: true, waitedMs: 1 }, /\(done: /],
      ["<html>gateway</html>", /answered 200 with a body that is not JSON/],
    ];
    for (const [body, message] of cases) {
      let error: unknown;
      try {
        parseAnswer(ApiRunWait, "GET", "/runs/r1/wait", answer(body));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).message).toMatch(message);
      expect((error as CliError).message).not.toContain("\n");
      expect((error as CliError).code).toBe(EXIT.usage);
    }
  });
});

describe("numbers in terminal output", () => {
  it("rewards print with four significant digits, not a float's 17", async () => {
    const { formatNumber } = await import("../src/format");
    expect(formatNumber(0.12345678901234567)).toBe("0.1235");
    expect(formatNumber(0.30000000000000004)).toBe("0.3");
    expect(formatNumber(12.3456)).toBe("12.35");
    expect(formatNumber(-0.0000001234567)).toBe("-1.235e-7");
    expect(formatNumber(0)).toBe("0");
    expect(formatNumber(Number.NaN)).toBe("NaN");
  });
});
