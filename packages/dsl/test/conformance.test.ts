/**
 * The conformance suite (packages/dsl/conformance/*.json), shared with the Python port's
 * tests (gpu-runtime/tests/schedule). Each case is parsed and validated against its
 * actors; then its expected errors, schedules, canonical text, tree and stats must match.
 */
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_KINDS, SplitMix64, check, format, sampleMany, stats, stripMeta, type Schedule } from "../src";

const dir = resolve(__dirname, "../conformance");

interface ExpectedError {
  kind: string;
  line: number;
  column: number;
  message: string;
  offset?: number;
}

interface Case {
  name: string;
  spec: string;
  actors: string[];
  maxTurns?: number;
  seed?: number | string;
  n?: number;
  errors?: ExpectedError[];
  schedules?: Schedule[];
  format?: string;
  ast?: unknown;
  stats?: Record<string, unknown>;
}

const files = readdirSync(dir).filter((f) => f.endsWith(".json") && f !== "prng.json").sort();
const allCases: Case[] = files.flatMap((f) => (JSON.parse(readFileSync(resolve(dir, f), "utf8")) as { cases: Case[] }).cases);

describe.each(files)("conformance %s", (file) => {
  const { cases } = JSON.parse(readFileSync(resolve(dir, file), "utf8")) as { cases: Case[] };
  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const { ast, errors } = check(c.spec, { actors: c.actors, maxTurns: c.maxTurns });
    if (c.errors) {
      expect(errors.map((e) => ({ kind: e.kind, line: e.line, column: e.column, message: e.message }))).toEqual(
        c.errors.map(({ kind, line, column, message }) => ({ kind, line, column, message })),
      );
      c.errors.forEach((e, i) => {
        if (e.offset !== undefined) expect(errors[i]!.span.start.offset).toBe(e.offset);
      });
      return;
    }
    expect(errors).toEqual([]);
    if (c.seed !== undefined) {
      expect(c.schedules, "a case with a seed states its schedules").toBeDefined();
      const options = { actors: c.actors, maxTurns: c.maxTurns };
      expect(sampleMany(ast!, BigInt(c.seed), c.n ?? 1, options)).toEqual(c.schedules);
    }
    if (c.format !== undefined) expect(format(ast!)).toBe(c.format);
    if (c.ast !== undefined) expect(stripMeta(ast!)).toEqual(c.ast);
    if (c.stats !== undefined) {
      const got = stats(ast!, { actors: c.actors }) as unknown as Record<string, unknown>;
      for (const [key, value] of Object.entries(c.stats)) expect(got[key], key).toEqual(value);
    }
  });
});

describe("conformance coverage", () => {
  it("has at least 40 cases with unique names", () => {
    expect(allCases.length).toBeGreaterThanOrEqual(40);
    expect(new Set(allCases.map((c) => c.name)).size).toBe(allCases.length);
  });

  it("covers every error kind", () => {
    const seen = new Set(allCases.flatMap((c) => (c.errors ?? []).map((e) => e.kind)));
    expect([...ERROR_KINDS].filter((k) => !seen.has(k))).toEqual([]);
  });

  it("covers every construct in a valid, sampled case", () => {
    const sampled = allCases.filter((c) => c.schedules !== undefined).map((c) => c.spec);
    for (const token of ["->", "/", ":", "&", "*(", "*", "#"]) expect(sampled.some((s) => s.includes(token)), token).toBe(true);
  });
});

describe("conformance prng", () => {
  const prng = JSON.parse(readFileSync(resolve(dir, "prng.json"), "utf8")) as {
    u64: { seed: string; outputs: string[] }[];
    draws: { name: string; seed: string; ops: [string, ...unknown[]][]; expect: number[] }[];
  };

  it.each(prng.u64.map((v) => [v.seed, v] as const))("splitmix64 outputs for seed %s match the reference", (_seed, v) => {
    const rng = new SplitMix64(BigInt(v.seed));
    expect(v.outputs.map(() => rng.nextU64().toString())).toEqual(v.outputs);
  });

  it.each(prng.draws.map((d) => [d.name, d] as const))("%s", (_name, d) => {
    const rng = new SplitMix64(BigInt(d.seed));
    const got = d.ops.map(([op, a, b]) => {
      if (op === "below") return rng.below(a as number);
      if (op === "between") return rng.between(a as number, b as number);
      if (op === "weighted") return rng.weighted(a as number[]);
      throw new Error(`unknown op ${op}`);
    });
    expect(got).toEqual(d.expect);
  });
});
