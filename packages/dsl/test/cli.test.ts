import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { main, type CliIo } from "../src/cli/main";

const repo = resolve(__dirname, "../../..");

function run(argv: string[], stdin = ""): { code: number; out: string; err: string } {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: (t) => void (out += t + "\n"),
    stderr: (t) => void (err += t + "\n"),
    readFile: (p) => {
      throw new Error(`ENOENT: no such file, open '${p}'`);
    },
    readStdin: () => stdin,
  };
  const code = main(argv, io);
  return { code, out, err };
}

describe("troupe-dsl check", () => {
  it("exits 0 for a valid spec", () => {
    const r = run(["check", "Bob -> Alice -> (Bob/Alice)*5", "--actors", "Bob,Alice"]);
    expect(r).toMatchObject({ code: 0, out: "ok: 7..7 turns\n" });
  });

  it("exits 1 with every error as JSON", () => {
    const r = run(["check", "Bbo -> Alice*40", "--actors", "Bob,Alice", "--max-turns", "16", "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual({
      errors: [
        { kind: "unknown_actor", message: 'unknown actor "Bbo"; did you mean "Bob"?', line: 1, column: 1 },
        { kind: "too_many_turns", message: "this spec can take up to 41 turns, more than the maximum of 16", line: 1, column: 1 },
      ],
    });
  });

  it("shows errors in text with the line and a caret", () => {
    const r = run(["check", "Bob ->\n  (Alice | Bob)", "--actors", "Bob,Alice"]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('2:10 error[unexpected_character]: unexpected character "|"; did you mean "/" (choice)?\n    (Alice | Bob)\n           ^\n');
  });

  it("answers JSON with an empty error list when valid", () => {
    expect(run(["check", "A", "--actors", "A", "--json"])).toMatchObject({ code: 0, out: '{"errors":[]}\n' });
  });
});

describe("troupe-dsl expand", () => {
  it("prints schedules as JSON; schedule i uses seed + i", () => {
    const r = run(["expand", "Bob -> Alice -> (Bob/Alice)*5", "--actors", "Bob,Alice", "--seed", "0", "--n", "3", "--json"]);
    expect(r.code).toBe(0);
    const { schedules } = JSON.parse(r.out) as { schedules: string[][][] };
    expect(schedules).toHaveLength(3);
    for (const s of schedules) expect(s.length).toBe(7);
    const second = JSON.parse(run(["expand", "Bob -> Alice -> (Bob/Alice)*5", "--actors", "Bob,Alice", "--seed", "1", "--json"]).out);
    expect(second.schedules[0]).toEqual(schedules[1]);
  });

  it("prints one schedule per line in text", () => {
    const r = run(["expand", "(Pro & Con)*2 -> Judge", "--actors", "Pro,Con,Judge", "--seed", "5"]);
    expect(r).toMatchObject({ code: 0, out: "Pro & Con -> Pro & Con -> Judge\n" });
  });

  it("reads the spec from standard input with -", () => {
    const r = run(["expand", "-", "--actors", "A,B", "--seed", "18446744073709551615", "--json"], "A -> B # from stdin\n");
    expect(JSON.parse(r.out)).toEqual({ schedules: [[["A"], ["B"]]] });
  });

  it("exits 1 for an invalid spec", () => {
    expect(run(["expand", "A -> *3", "--actors", "A", "--seed", "0"]).code).toBe(1);
  });
});

describe("troupe-dsl stats and format", () => {
  it("prints exact stats as JSON", () => {
    const r = run(["stats", "(A:3 / B:1) -> C*(1..3)", "--actors", "A,B,C", "--json"]);
    expect(JSON.parse(r.out)).toEqual({
      minTurns: 2,
      maxTurns: 4,
      expectedTurns: 3,
      maxActorsPerTurn: 1,
      actors: {
        A: { minTurns: 0, maxTurns: 1, expectedTurns: 0.75 },
        B: { minTurns: 0, maxTurns: 1, expectedTurns: 0.25 },
        C: { minTurns: 1, maxTurns: 3, expectedTurns: 2 },
      },
    });
  });

  it("formats to canonical text", () => {
    expect(run(["format", "A->(B/C)   # x\n->D*(2..2)"])).toMatchObject({ code: 0, out: "A -> (B / C) -> D*2\n" });
  });
});

describe("usage errors exit 2 and name the flag", () => {
  it.each([
    [["check", "A"], /--actors is required/],
    [["expand", "A", "--actors", "A"], /--seed is required/],
    [["expand", "A", "--actors", "A", "--seed=-1"], /--seed: expected a whole number/],
    [["expand", "A", "--actors", "A", "--seed", "1.5"], /--seed: expected a whole number/],
    [["check", "A", "--actors", "A", "--max-turns", "0"], /--max-turns: expected a whole number from 1/],
    [["check", "A", "--actors", "A", "--bogus"], /Unknown option '--bogus'/],
    [["launch", "A"], /unknown command "launch"/],
    [["check", "A", "B", "--actors", "A"], /unexpected argument "B" \(quote the spec/],
    [["check", "@/no/such/file", "--actors", "A"], /cannot read \/no\/such\/file/],
  ])("%j", (argv, message) => {
    const r = run(argv as string[]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });
});

describe("the installed bin", () => {
  const execFileAsync = promisify(execFile);

  it("runs through npx from the repository root, reading @FILE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "troupe-dsl-"));
    const file = join(dir, "round.spec");
    writeFileSync(file, "Bob -> Alice -> (Bob/Alice)*5\n");
    const { stdout } = await execFileAsync("npx", ["--no-install", "troupe-dsl", "expand", `@${file}`, "--actors", "Bob,Alice", "--seed", "0", "--json"], { cwd: repo });
    expect(JSON.parse(stdout).schedules[0]).toHaveLength(7);
    const failed = await execFileAsync(process.execPath, [join(repo, "packages/dsl/bin/troupe-dsl.mjs"), "check", "*3", "--actors", "Bob", "--json"], { cwd: repo }).catch((e: { code: number; stdout: string }) => e);
    expect("code" in failed && failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toEqual({ errors: [{ kind: "repeat_without_subject", message: expect.any(String), line: 1, column: 1 }] });
  });
});
