import type { RunEvent } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBareRun, openServices, type TestServices } from "./helpers/services";

/**
 * `ratings.ofRun` against real Postgres: the metric events gpu-runtime troupe/ratings emits at two checkpoints,
 * stored as a runner stores them, read back per actor and checkpoint; a viewer may read them; a run without ratings has none.
 */

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services?.close();
});

const ts = Date.now();
const ratingEvents = (seq: number, step: number, rating: number): RunEvent[] => [
  { seq, ts, type: "metric", step, actor: "player", values: { "elo/rating": rating, "elo/ci95": 400, "elo/games": step * 8, "game/win": 0.1 } },
  { seq: seq + 1, ts, type: "metric", step, values: { "elo/opponent/random": 1000, "elo/opponent/first_move": 1114.7 } },
];

describe("ratings.ofRun", () => {
  it("reads the Elo of each checkpoint and the fixed opponents from the stored metrics", async () => {
    const runId = await createBareRun(services);
    await storeEvents(services.db, runId, [...ratingEvents(2, 2, 437.9), ...ratingEvents(4, 4, 492.7)]);
    const viewer = await services.user("viewer", "elo-viewer");
    const { pools } = await viewer.caller.ratings.ofRun({ runId });
    expect(pools).toHaveLength(1);
    expect(pools[0]!.points).toEqual([
      { step: 2, actor: "player", rating: 437.9, ci95: 400, games: 16 },
      { step: 4, actor: "player", rating: 492.7, ci95: 400, games: 32 },
    ]);
    expect(pools[0]!.opponents).toEqual([
      { name: "random", rating: 1000 },
      { name: "first_move", rating: 1114.7 },
    ]);
  });

  it("a run without ratings has no pools; an unknown run is NOT_FOUND", async () => {
    const runId = await createBareRun(services);
    expect(await services.caller.ratings.ofRun({ runId })).toEqual({ pools: [] });
    await expect(services.caller.ratings.ofRun({ runId: "no-such-run" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
