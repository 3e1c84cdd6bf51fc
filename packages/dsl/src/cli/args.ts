import { parseArgs } from "node:util";
import { DEFAULT_MAX_TURNS } from "../ast";

export const USAGE = `usage:
  troupe-dsl check  SPEC --actors A,B [--max-turns N] [--json]
  troupe-dsl expand SPEC --actors A,B --seed N [--n K] [--max-turns N] [--json]
  troupe-dsl stats  SPEC --actors A,B [--max-turns N] [--json]
  troupe-dsl format SPEC

SPEC is the spec text itself, @FILE to read it from a file, or - to read standard input.
--max-turns defaults to ${DEFAULT_MAX_TURNS}. Exit codes: 0 valid, 1 the spec has errors, 2 bad usage.`;

export type Command = "check" | "expand" | "stats" | "format";

export interface CliArgs {
  command: Command;
  spec: string;
  actors: string[];
  maxTurns: number;
  seed: bigint;
  n: number;
  json: boolean;
}

/** Wrong command-line use; the message names the flag. Exit code 2. */
export class UsageError extends Error {}

const COMMANDS: readonly string[] = ["check", "expand", "stats", "format"];

export function parseCliArgs(argv: string[]): CliArgs {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        actors: { type: "string" },
        "max-turns": { type: "string" },
        seed: { type: "string" },
        n: { type: "string" },
        json: { type: "boolean", default: false },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const [command, spec, ...rest] = positionals;
  if (command === undefined || !COMMANDS.includes(command)) {
    throw new UsageError(command === undefined ? "missing command" : `unknown command "${command}"`);
  }
  if (spec === undefined) throw new UsageError(`${command}: missing SPEC`);
  if (rest.length > 0) throw new UsageError(`${command}: unexpected argument "${rest[0]}" (quote the spec if it has spaces)`);
  const needsActors = command !== "format";
  const actorsText = values.actors as string | undefined;
  if (needsActors && actorsText === undefined) throw new UsageError(`${command}: --actors is required, like --actors Bob,Alice`);
  const actors = (actorsText ?? "").split(",").map((a) => a.trim()).filter((a) => a.length > 0);
  if (needsActors && actors.length === 0) throw new UsageError("--actors: give at least one actor name");
  const seedText = values.seed as string | undefined;
  if (command === "expand" && seedText === undefined) throw new UsageError("expand: --seed is required, like --seed 0");
  return {
    command: command as Command,
    spec,
    actors,
    maxTurns: whole("--max-turns", values["max-turns"] as string | undefined, DEFAULT_MAX_TURNS, 1, Number.MAX_SAFE_INTEGER),
    seed: seedOf(seedText ?? "0"),
    n: whole("--n", values.n as string | undefined, 1, 1, 100_000),
    json: values.json === true,
  };
}

function whole(flag: string, text: string | undefined, fallback: number, least: number, most: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^[0-9]+$/.test(text) || value < least || value > most) {
    throw new UsageError(`${flag}: expected a whole number from ${least} to ${most}, got "${text}"`);
  }
  return value;
}

function seedOf(text: string): bigint {
  if (!/^[0-9]+$/.test(text) || BigInt(text) >= 1n << 64n) {
    throw new UsageError(`--seed: expected a whole number from 0 to 2^64-1, got "${text}"`);
  }
  return BigInt(text);
}
