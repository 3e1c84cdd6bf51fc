import type { RunEvent } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openServices, uniqueId, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

/** A metric event of one actor at one step. */
const metric = (seq: number, step: number, actor: string, values: Record<string, number>): RunEvent => ({ seq, ts: seq, type: "metric", step, actor, values });

describe("run.table sorted by a metric", () => {
  it("orders runs by the latest value of a metric, per actor or by each run's first actor, runs without it last, across pages", async () => {
    const tag = uniqueId("metric-sort");
    const make = async (label: string, events: RunEvent[]) => {
      const id = uniqueId(label);
      services.runIds.push(id);
      await services.db.run.create({ data: { id, name: `${tag} ${label}`, spec: {}, specVersion: 1, seed: 0, status: "succeeded", tags: [tag] } });
      if (events.length > 0) await storeEvents(services.db, id, events);
      return id;
    };
    // Latest reward of alice: a 0.9 (an early 0.1 must not count), b 0.2, c 0.5; bob: a -1, b 3, c none.
    const a = await make("a", [metric(1, 1, "alice", { "reward/mean": 0.1 }), metric(2, 5, "alice", { "reward/mean": 0.9 }), metric(3, 5, "bob", { "reward/mean": -1 })]);
    const b = await make("b", [metric(1, 3, "alice", { "reward/mean": 0.2, loss: 4 }), metric(2, 3, "bob", { "reward/mean": 3 })]);
    const c = await make("c", [metric(1, 2, "alice", { "reward/mean": 0.5, loss: 1 })]);
    const none = await make("none", []);

    const ids = async (input: Parameters<typeof services.caller.run.table>[0]) => (await services.caller.run.table({ tag, ...input })).items.map((r) => r.id);

    expect(await ids({ sort: "reward/mean", dir: "desc" })).toEqual([a, c, b, none]);
    expect(await ids({ sort: "reward/mean", dir: "asc" })).toEqual([b, c, a, none]);
    expect(await ids({ sort: "reward/mean", dir: "desc", sortActor: "bob" })).toEqual([b, a, ...[c, none].sort().reverse()]);
    // Runs without the metric come last, by id in the direction asked for.
    expect(await ids({ sort: "loss", dir: "asc" })).toEqual([c, b, ...[a, none].sort()]);

    // Pages split the sorted order without repeating or skipping a run, and the total is of all matches.
    const page1 = await services.caller.run.table({ tag, sort: "reward/mean", dir: "desc", pageSize: 3, page: 1 });
    const page2 = await services.caller.run.table({ tag, sort: "reward/mean", dir: "desc", pageSize: 3, page: 2 });
    expect(page1.total).toBe(4);
    expect([...page1.items, ...page2.items].map((r) => r.id)).toEqual([a, c, b, none]);
    // The rows carry the same values the order was made from.
    expect(page1.items[0]!.keyMetrics["reward/mean"]).toEqual({ alice: 0.9, bob: -1 });

    // Filters still apply.
    expect(await ids({ sort: "reward/mean", dir: "desc", q: `${tag} b` })).toEqual([b]);
    await expect(services.caller.run.table({ tag, sort: "reward/std" as never })).rejects.toThrow(/sort/);
  });
});
