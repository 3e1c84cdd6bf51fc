import { describe, expect, it } from "vitest";
import { DEMO_SPEC, DEMO_SPEC_INPUT } from "../src/demo";
import { RunSpec } from "../src/runSpec";
import { orderLikeSchema, orderPartSpec, orderRunSpec } from "../src/specOrder";

/** What Postgres `jsonb` does to key order: shorter keys first, then bytewise (recursively). */
function jsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (typeof value !== "object" || value === null) return value;
  const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, jsonbOrder((value as Record<string, unknown>)[k])]));
}

describe("orderRunSpec (stored specs come back in the schema's key order)", () => {
  it("restores a jsonb-reordered full spec to exactly the order zod's parse gives", () => {
    const stored = jsonbOrder(DEMO_SPEC);
    expect(JSON.stringify(stored)).not.toBe(JSON.stringify(DEMO_SPEC)); // jsonb really reorders it
    expect(JSON.stringify(orderRunSpec(stored))).toBe(JSON.stringify(DEMO_SPEC));
    expect(JSON.stringify(orderRunSpec(stored))).toBe(JSON.stringify(RunSpec.parse(stored)));
  });

  it("orders a spec as written (defaults omitted) without adding or changing anything", () => {
    const ordered = orderRunSpec(jsonbOrder(DEMO_SPEC_INPUT)) as Record<string, unknown>;
    expect(ordered).toEqual(DEMO_SPEC_INPUT);
    expect(Object.keys(ordered)).toEqual(["specVersion", "name", "description", "seed", "actors", "datasets", "rewards", "environments", "algorithm", "trainer", "tags"]);
    const actor = (ordered.actors as Record<string, unknown>[])[0]!;
    expect(Object.keys(actor)).toEqual(["name", "model", "backend", "trainable", "training", "sampling"]);
    expect(Object.keys(actor.model as object)).toEqual(["source", "preset"]);
    expect(Object.keys((ordered.environments as Record<string, unknown>[])[0]!)).toEqual(["name", "kind", "dataset", "actors", "prompt", "rewards"]);
  });

  it("follows each option of a discriminated union, keeps unknown keys last in their order, and record entries as they are", () => {
    const draft = {
      trainer: { steps: 3 },
      zeta: 1,
      name: "draft",
      alpha: { b: 1, a: 2 },
      specVersion: 1,
      datasets: [{ source: { split: "train", id: "org/ds", kind: "huggingface" }, name: "d" }],
      rewards: [{ source: { entrypoint: "reward", code: "def reward(**k): return 0", kind: "python" }, name: "r", scope: "completion" }],
      environments: [{ systemPrompts: { Zed: "z", Al: "a" }, name: "e" }],
    };
    const ordered = orderRunSpec(draft) as Record<string, any>;
    expect(Object.keys(ordered)).toEqual(["specVersion", "name", "datasets", "rewards", "environments", "trainer", "zeta", "alpha"]);
    expect(Object.keys(ordered.alpha)).toEqual(["b", "a"]); // unknown: untouched
    expect(Object.keys(ordered.datasets[0].source)).toEqual(["kind", "id", "split"]);
    expect(Object.keys(ordered.rewards[0])).toEqual(["name", "source", "scope"]);
    expect(Object.keys(ordered.rewards[0].source)).toEqual(["kind", "code", "entrypoint"]);
    expect(Object.keys(ordered.environments[0].systemPrompts)).toEqual(["Zed", "Al"]);
    expect(ordered).toEqual(draft);
  });

  it("returns what it cannot describe as it is, and is deterministic", () => {
    for (const odd of [null, 3, "x", [], [1, { b: 1, a: 2 }], { actors: "not a list" }]) expect(orderRunSpec(odd)).toEqual(odd);
    const once = JSON.stringify(orderRunSpec(jsonbOrder(DEMO_SPEC)));
    expect(JSON.stringify(orderRunSpec(JSON.parse(once)))).toBe(once);
    expect(JSON.stringify(orderLikeSchema(RunSpec.shape.trainer, { steps: 1, device: "cpu", evalEvery: 0 }))).toBe('{"steps":1,"evalEvery":0,"device":"cpu"}');
  });

  it("orders designer parts by their kind's schema", () => {
    const actor = jsonbOrder(DEMO_SPEC_INPUT.actors[0]);
    expect(JSON.stringify(orderPartSpec("actor", actor))).toBe(JSON.stringify(DEMO_SPEC_INPUT.actors[0]));
    expect(orderPartSpec("unknown-kind", { b: 1, a: 2 })).toEqual({ b: 1, a: 2 });
  });
});
