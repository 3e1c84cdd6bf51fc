import { RunEvent, type OffloadEvent } from "@troupe/contracts";
import { rewindRunAfterStep, storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOffloads } from "../src/features/runs/server/offloads";
import { createBareRun, openServices, type TestServices } from "./helpers/services";

/**
 * Offload events on the memory tab: stored the way the runner stores them (each line parsed with the
 * contracts' RunEvent, then storeEvents), read back as one marker per move with totals per actor and
 * direction, and, for a run with more moves than the chart takes, summed per block of steps without
 * losing a byte or a move. The expected values are computed here from the events themselves.
 */

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

const MiB = 2 ** 20;

/** Two actors taking turns on one device: each step, the other actor is offloaded before an update and reloaded after. */
function turnEvents(
  steps: number,
  fromSeq: number,
  actors: readonly (readonly [string, number])[] = [
    ["alice", 900 * MiB],
    ["bob", 300 * MiB],
  ],
): RunEvent[] {
  const out: RunEvent[] = [];
  let seq = fromSeq;
  for (let step = 1; step <= steps; step++) {
    const ts = 1_700_000_000_000 + step * 1000;
    for (const [actor, size] of actors) {
      const line = (direction: "offload" | "reload", seconds: number): string =>
        JSON.stringify({ seq: seq++, ts, type: "offload", step, actor, direction, parts: ["params", "optimizer"], phase: "update", bytes: size + step, seconds });
      // As the runner does: the line is parsed with the contract, then stored.
      out.push(RunEvent.parse(JSON.parse(line(step % 2 === 0 ? "offload" : "reload", 0.25 + step / 1000))));
    }
    out.push({ seq: seq++, ts, type: "metric", step, actor: "alice", values: { loss: 1 / step } });
  }
  return out;
}

const offloadsOf = (events: RunEvent[]) => events.filter((e): e is OffloadEvent => e.type === "offload");

describe("run offloads", () => {
  it("a marker per move and totals per actor and direction", async () => {
    const runId = await createBareRun(services);
    const events = turnEvents(6, 2);
    await storeEvents(services.db, runId, events);
    const moves = offloadsOf(events);

    const got = await loadOffloads(services.db, runId, 2000);
    expect(got.bucketWidth).toBe(1);
    expect(got.markers).toEqual(
      moves.map((e) => ({ actor: e.actor, direction: e.direction, firstStep: e.step, lastStep: e.step, count: 1, bytes: e.bytes, seconds: e.seconds, parts: e.parts, phase: e.phase, seq: e.seq })),
    );
    const expected = ["alice", "bob"].flatMap((actor) =>
      (["offload", "reload"] as const).map((direction) => {
        const of = moves.filter((e) => e.actor === actor && e.direction === direction);
        return {
          actor,
          direction,
          count: of.length,
          bytes: of.reduce((a, e) => a + e.bytes, 0),
          seconds: of.reduce((a, e) => a + e.seconds, 0),
          firstStep: Math.min(...of.map((e) => e.step)),
          lastStep: Math.max(...of.map((e) => e.step)),
        };
      }),
    );
    expect(got.totals.map((t) => ({ ...t, seconds: Number(t.seconds.toFixed(9)) }))).toEqual(expected.map((t) => ({ ...t, seconds: Number(t.seconds.toFixed(9)) })));
  });

  it.each([
    ["two actors", 600, 2],
    ["six actors (more series than the width assumed: merged further)", 200, 6],
  ])("a run with more moves than markers sums them per block of steps, losing none: %s", async (_name, steps, actorCount) => {
    const runId = await createBareRun(services);
    const actors = Array.from({ length: actorCount }, (_, i) => [`actor${i}`, (i + 1) * 100 * MiB] as const);
    const events = turnEvents(steps, 2, actors);
    // In batches of 500, as the runner stores them (one transaction each).
    for (let i = 0; i < events.length; i += 500) await storeEvents(services.db, runId, events.slice(i, i + 500));
    const moves = offloadsOf(events);

    const got = await loadOffloads(services.db, runId, 100);
    expect(got.markers.length).toBeLessThanOrEqual(100);
    expect(got.markers.length).toBeGreaterThan(10);
    const width = got.bucketWidth;
    expect(Math.log2(width) % 1).toBe(0);
    expect(width).toBeGreaterThan(1);
    for (const m of got.markers) {
      expect(Math.floor(m.firstStep / width)).toBe(Math.floor(m.lastStep / width));
      const of = moves.filter((e) => e.actor === m.actor && e.direction === m.direction && Math.floor(e.step / width) === Math.floor(m.firstStep / width));
      expect(m.count).toBe(of.length);
      expect(m.bytes).toBe(of.reduce((a, e) => a + e.bytes, 0));
      expect(m.seq).toBe(Math.max(...of.map((e) => e.seq)));
      expect(m.parts).toBeNull();
    }
    expect(got.markers.reduce((a, m) => a + m.count, 0)).toBe(moves.length);
    expect(got.totals.reduce((a, t) => a + t.count, 0)).toBe(moves.length);
  });

  it("a run resumed from its checkpoint forgets the moves of the steps after it (the new attempt makes them again)", async () => {
    const runId = await createBareRun(services);
    const events = turnEvents(6, 2);
    await storeEvents(services.db, runId, events);
    await rewindRunAfterStep(services.db, runId, 3);
    const kept = offloadsOf(events).filter((e) => e.step <= 3);
    const got = await loadOffloads(services.db, runId, 2000);
    expect(got.markers.map((m) => m.seq)).toEqual(kept.map((e) => e.seq));
    expect(got.totals.reduce((a, t) => a + t.count, 0)).toBe(kept.length);
  });

  it("a run without moves has no markers and no totals", async () => {
    const runId = await createBareRun(services);
    await storeEvents(services.db, runId, [{ seq: 2, ts: Date.now(), type: "metric", step: 1, values: { loss: 1 } }]);
    expect(await loadOffloads(services.db, runId, 2000)).toEqual({ markers: [], totals: [], bucketWidth: 1 });
  });
});
