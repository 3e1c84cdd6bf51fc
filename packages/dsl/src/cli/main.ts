import { readFileSync } from "node:fs";
import { check } from "../check";
import { format } from "../format";
import { parse } from "../parser";
import { sampleMany } from "../sample";
import { stats } from "../stats";
import { USAGE, UsageError, parseCliArgs, type CliArgs } from "./args";
import { renderErrors, renderSchedule, renderStats } from "./render";

/** Where the CLI writes and reads; tests pass their own. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readFile(path: string): string;
  readStdin(): string;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text + "\n"),
  stderr: (text) => process.stderr.write(text + "\n"),
  readFile: (path) => readFileSync(path, "utf8"),
  readStdin: () => readFileSync(0, "utf8"),
};

/** Runs one command; returns the exit code (0 valid, 1 spec errors, 2 usage). */
export function main(argv: string[], io: CliIo = processIo): number {
  if (argv.length === 0 || argv.includes("--help") || argv.includes("-h")) {
    io.stdout(USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  let args: CliArgs;
  let source: string;
  try {
    args = parseCliArgs(argv);
    source = readSpec(args.spec, io);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`troupe-dsl: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  if (args.command === "format") return runFormat(source, args, io);
  const { ast, errors } = check(source, { actors: args.actors, maxTurns: args.maxTurns });
  if (errors.length > 0 || ast === undefined) {
    if (args.json) {
      io.stdout(JSON.stringify({ errors: errors.map((e) => ({ kind: e.kind, message: e.message, line: e.line, column: e.column })) }));
    } else {
      io.stdout(renderErrors(errors, source));
    }
    return 1;
  }
  const options = { actors: args.actors, maxTurns: args.maxTurns };
  switch (args.command) {
    case "check": {
      const s = stats(ast, options);
      io.stdout(args.json ? JSON.stringify({ errors: [] }) : `ok: ${s.minTurns}..${s.maxTurns} turns`);
      return 0;
    }
    case "expand": {
      const schedules = sampleMany(ast, args.seed, args.n, options);
      io.stdout(args.json ? JSON.stringify({ schedules }) : schedules.map(renderSchedule).join("\n"));
      return 0;
    }
    case "stats": {
      const s = stats(ast, options);
      io.stdout(args.json ? JSON.stringify(s) : renderStats(s));
      return 0;
    }
  }
}

function runFormat(source: string, args: CliArgs, io: CliIo): number {
  const parsed = parse(source);
  if (!parsed.ok) {
    io.stdout(args.json ? JSON.stringify({ errors: parsed.errors.map(({ kind, message, line, column }) => ({ kind, message, line, column })) }) : renderErrors(parsed.errors, source));
    return 1;
  }
  io.stdout(args.json ? JSON.stringify({ formatted: format(parsed.ast) }) : format(parsed.ast));
  return 0;
}

function readSpec(spec: string, io: CliIo): string {
  try {
    if (spec === "-") return io.readStdin();
    if (spec.startsWith("@")) return io.readFile(spec.slice(1));
  } catch (e) {
    throw new UsageError(`cannot read ${spec === "-" ? "standard input" : spec.slice(1)}: ${(e as Error).message}`);
  }
  return spec;
}
