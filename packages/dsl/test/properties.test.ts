/** Property tests (fast-check): round trips, bounds and frequencies on random trees. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { astEqual, format, fromGraph, parse, sample, sampleMany, stats, toGraph, validate, type Node, type Schedule } from "../src";
import { anyTree, namesIn, sampleableTree, withinFiveSigma } from "./arbitraries";

function parsed(text: string): Node {
  const result = parse(text);
  if (!result.ok) throw new Error(`did not parse: ${text}\n${JSON.stringify(result.errors)}`);
  return result.ast;
}

describe("format / parse", () => {
  it("parse(format(ast)) equals ast", () => {
    fc.assert(fc.property(anyTree, (ast) => astEqual(parsed(format(ast)), ast)), { numRuns: 500 });
  });

  it("format is a fixed point: formatting parsed canonical text gives the same text", () => {
    fc.assert(fc.property(anyTree, (ast) => format(parsed(format(ast))) === format(ast)), { numRuns: 300 });
  });

  it("never throws on arbitrary text, and every name comes verbatim from its span", () => {
    const alphabet = fc.constantFrom(..."AB_x9-> /&*:()..#\n\t3|,\u2192\u{1F3AD}".split(""), "->", "..", "Bob", "*(2..3)");
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 30 }).map((parts) => parts.join("")), (text) => {
        const result = parse(text);
        if (!result.ok) {
          const [error] = result.errors;
          return result.errors.length === 1 && error!.span.start.offset <= Array.from(text).length;
        }
        const chars = Array.from(text);
        const names: Node[] = [];
        const walk = (n: Node): void => {
          if (n.type === "actor") names.push(n);
          const kids = n.type === "sequence" ? n.items : n.type === "choice" ? n.options.map((o) => o.node) : n.type === "parallel" ? n.branches : n.type === "repeat" ? [n.body] : [];
          kids.forEach(walk);
        };
        walk(result.ast);
        return names.every((n) => n.type === "actor" && chars.slice(n.span!.start.offset, n.span!.end.offset).join("") === n.name);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("graph form", () => {
  it("fromGraph(toGraph(ast)) deep-equals ast, spans included", () => {
    fc.assert(
      fc.property(anyTree, (ast) => {
        const withSpans = parsed(format(ast));
        expect(fromGraph(toGraph(withSpans))).toEqual(withSpans);
        expect(fromGraph(toGraph(ast))).toEqual(ast);
      }),
      { numRuns: 300 },
    );
  });

  it("toGraph(fromGraph(graph)) gives the graph back, whatever its ids and array order", () => {
    fc.assert(
      fc.property(anyTree, fc.integer(), (ast, salt) => {
        const canonical = toGraph(ast);
        const rename = new Map(canonical.nodes.map((n, i) => [n.id, n.kind === "start" ? "start" : `node-${(i * 7919 + salt) >>> 0}-${i}`]));
        const graph = {
          nodes: canonical.nodes.map((n) => ({ ...n, id: rename.get(n.id)! })).reverse(),
          edges: canonical.edges.map((e) => ({ ...e, from: rename.get(e.from)!, to: rename.get(e.to)! })).reverse(),
        };
        const back = toGraph(fromGraph(graph));
        const byId = <T extends { id: string }>(xs: T[]) => [...xs].sort((a, b) => a.id.localeCompare(b.id));
        const byEdge = <T extends { from: string; to: string }>(xs: T[]) => [...xs].sort((a, b) => `${a.from}>${a.to}`.localeCompare(`${b.from}>${b.to}`));
        expect(byId(back.nodes)).toEqual(byId(graph.nodes));
        expect(byEdge(back.edges)).toEqual(byEdge(graph.edges));
        // And canonical graphs come back exactly, array order included.
        expect(toGraph(fromGraph(canonical))).toEqual(canonical);
      }),
      { numRuns: 200 },
    );
  });
});

describe("samples and stats", () => {
  const setting = (ast: Node) => ({ actors: [...namesIn(ast), "Extra"], maxTurns: 100_000 });

  it("every sample lies within the stats bounds, overall, per actor and per turn", () => {
    fc.assert(
      fc.property(sampleableTree, fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (ast, seed) => {
        const options = setting(ast);
        const s = stats(ast, options);
        fc.pre(s.minTurns >= 1 && s.maxTurns <= 5_000);
        expect(validate(ast, options)).toEqual([]);
        for (const schedule of sampleMany(ast, seed, 5, options)) {
          expect(schedule.length).toBeGreaterThanOrEqual(s.minTurns);
          expect(schedule.length).toBeLessThanOrEqual(s.maxTurns);
          for (const turn of schedule) expect(turn.length).toBeLessThanOrEqual(s.maxActorsPerTurn);
          const counts = countActs(schedule);
          for (const [name, a] of Object.entries(s.actors)) {
            const c = counts.get(name) ?? 0;
            expect(c).toBeGreaterThanOrEqual(a.minTurns);
            expect(c).toBeLessThanOrEqual(a.maxTurns);
          }
          for (const name of counts.keys()) expect(s.actors[name]).toBeDefined();
        }
      }),
      { numRuns: 300 },
    );
  });

  it("the mean turn count matches expectedTurns (Popoviciu: sd <= (max - min) / 2, 5 sd of the mean)", () => {
    fc.assert(
      fc.property(sampleableTree, fc.nat(), (ast, seed) => {
        const options = setting(ast);
        const s = stats(ast, options);
        fc.pre(s.minTurns >= 1 && s.maxTurns <= 500);
        const n = 400;
        const schedules = sampleMany(ast, seed, n, options);
        const tolerance = (range: number) => (5 * (range / 2)) / Math.sqrt(n) + 1e-9;
        const mean = schedules.reduce((sum, sch) => sum + sch.length, 0) / n;
        expect(Math.abs(mean - s.expectedTurns)).toBeLessThanOrEqual(tolerance(s.maxTurns - s.minTurns));
        for (const [name, a] of Object.entries(s.actors)) {
          const actorMean = schedules.reduce((sum, sch) => sum + (countActs(sch).get(name) ?? 0), 0) / n;
          expect(Math.abs(actorMean - a.expectedTurns)).toBeLessThanOrEqual(tolerance(a.maxTurns - a.minTurns));
        }
      }),
      { numRuns: 40 },
    );
  });

  it("choice frequencies match the weights (each option within 5 binomial sd)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 2, maxLength: 5 }), fc.nat(), (weights, seed) => {
        const actors = weights.map((_, i) => `O${i}`);
        const ast = parsed(`(${weights.map((w, i) => `O${i}:${w}`).join(" / ")})`);
        const n = 4000;
        const counts = countActs(sampleMany(ast, seed, n, { actors }).flat());
        const total = weights.reduce((a, b) => a + b, 0);
        weights.forEach((w, i) => expect(withinFiveSigma(counts.get(`O${i}`) ?? 0, n, w / total), `O${i}`).toBe(true));
      }),
      { numRuns: 30 },
    );
  });

  it("range counts and any-actor draws are uniform (5 binomial sd)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 2, max: 5 }), fc.nat(), (lo, width, nActors, seed) => {
        const hi = lo + width;
        const actors = Array.from({ length: nActors }, (_, i) => `P${i}`);
        const n = 3000;
        const lengths = sampleMany(parsed(`Start -> X*(${lo}..${hi})`), seed, n, { actors: ["Start", "X"] }).map((s) => s.length - 1);
        for (let k = lo; k <= hi; k++) expect(withinFiveSigma(lengths.filter((x) => x === k).length, n, 1 / (width + 1)), `count ${k}`).toBe(true);
        const picks = sampleMany(parsed("*"), seed, n, { actors }).map((s) => s[0]![0]!);
        for (const a of actors) expect(withinFiveSigma(picks.filter((p) => p === a).length, n, 1 / nActors), a).toBe(true);
      }),
      { numRuns: 20 },
    );
  });

  it("the frequency check can fail: a 3:1 choice is not accepted as 1:1", () => {
    const n = 4000;
    const picks = sampleMany(parsed("(A:3 / B:1)"), 1, n, { actors: ["A", "B"] }).map((s) => s[0]![0]);
    const a = picks.filter((p) => p === "A").length;
    expect(withinFiveSigma(a, n, 0.75)).toBe(true);
    expect(withinFiveSigma(a, n, 0.5)).toBe(false);
  });

  it("sample(ast, seed) is the first of sampleMany, and schedule i uses seed + i", () => {
    const ast = parsed("(A / B)*(1..4) -> *");
    const options = { actors: ["A", "B", "C"] };
    const many = sampleMany(ast, 41, 5, options);
    many.forEach((schedule, i) => expect(sample(ast, 41 + i, options)).toEqual(schedule));
  });
});

function countActs(schedule: Schedule): Map<string, number> {
  const counts = new Map<string, number>();
  for (const turn of schedule) for (const name of turn) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}
