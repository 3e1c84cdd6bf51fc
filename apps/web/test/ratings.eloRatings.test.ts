import { describe, expect, it } from "vitest";
import { groupMetrics } from "../src/features/runs/lib/metricGroups";
import { eloChartRows, latestRatings, parseEloName, shapeEloRatings, type EloMetricRow } from "../src/features/ratings/lib/eloRatings";

/** What gpu-runtime troupe/ratings/rater.py reports for a run with two actors and checkpoints at steps 4 and 8. */
const ROWS: EloMetricRow[] = [
  { name: "elo/rating", actor: "alice", step: 4, value: 980.4 },
  { name: "elo/ci95", actor: "alice", step: 4, value: 150 },
  { name: "elo/games", actor: "alice", step: 4, value: 24 },
  { name: "elo/rating", actor: "bob", step: 4, value: 900 },
  { name: "elo/ci95", actor: "bob", step: 4, value: 160 },
  { name: "elo/games", actor: "bob", step: 4, value: 24 },
  { name: "elo/opponent/random", actor: "", step: 4, value: 1000 },
  { name: "elo/opponent/first_move", actor: "", step: 4, value: 1100 },
  { name: "elo/rating", actor: "alice", step: 8, value: 1210 },
  { name: "elo/ci95", actor: "alice", step: 8, value: 90 },
  { name: "elo/games", actor: "alice", step: 8, value: 40 },
  { name: "elo/rating", actor: "bob", step: 8, value: 1050 },
  { name: "elo/ci95", actor: "bob", step: 8, value: 95 },
  { name: "elo/games", actor: "bob", step: 8, value: 40 },
  { name: "elo/opponent/random", actor: "", step: 8, value: 1000 },
  { name: "elo/opponent/first_move", actor: "", step: 8, value: 1130 },
  { name: "game/win", actor: "alice", step: 8, value: 0.5 },
];

describe("Elo per checkpoint, shaped for the run page (issue 31)", () => {
  it("reads the runtime's names, with and without an environment", () => {
    expect(parseEloName("elo/rating")).toEqual({ environment: null, field: "rating" });
    expect(parseEloName("elo/ttt/ci95")).toEqual({ environment: "ttt", field: "ci95" });
    expect(parseEloName("elo/opponent/first_move")).toEqual({ environment: null, opponent: "first_move" });
    expect(parseEloName("elo/c4/opponent/random")).toEqual({ environment: "c4", opponent: "random" });
    expect(parseEloName("elo/a/b/rating")).toBeNull();
    expect(parseEloName("elo/whatever")).toBeNull();
    expect(parseEloName("game/win")).toBeNull();
  });

  it("one pool: a point per actor and checkpoint, the fixed opponents' latest ratings, the anchor first", () => {
    const [pool, ...rest] = shapeEloRatings(ROWS);
    expect(rest).toEqual([]);
    expect(pool!.environment).toBeNull();
    expect(pool!.actors).toEqual(["alice", "bob"]);
    expect(pool!.points).toEqual([
      { step: 4, actor: "alice", rating: 980.4, ci95: 150, games: 24 },
      { step: 4, actor: "bob", rating: 900, ci95: 160, games: 24 },
      { step: 8, actor: "alice", rating: 1210, ci95: 90, games: 40 },
      { step: 8, actor: "bob", rating: 1050, ci95: 95, games: 40 },
    ]);
    expect(pool!.opponents).toEqual([
      { name: "random", rating: 1000 },
      { name: "first_move", rating: 1130 },
    ]);
    expect(latestRatings(pool!).map((p) => [p.actor, p.step, p.rating])).toEqual([
      ["alice", 8, 1210],
      ["bob", 8, 1050],
    ]);
  });

  it("chart rows: a row per step with each actor's rating and its 95% band", () => {
    const rows = eloChartRows(shapeEloRatings(ROWS)[0]!);
    expect(rows).toEqual([
      { step: 4, alice: 980.4, "alice:ci": [830.4, 1130.4], bob: 900, "bob:ci": [740, 1060] },
      { step: 8, alice: 1210, "alice:ci": [1120, 1300], bob: 1050, "bob:ci": [955, 1145] },
    ]);
  });

  it("several game environments: a pool each; the anchor is there even when not reported", () => {
    const pools = shapeEloRatings([
      { name: "elo/ttt/rating", actor: "alice", step: 2, value: 1010 },
      { name: "elo/c4/rating", actor: "alice", step: 2, value: 990 },
      { name: "elo/c4/ci95", actor: "alice", step: 2, value: 50 },
    ]);
    expect(pools.map((p) => p.environment)).toEqual(["c4", "ttt"]);
    expect(pools[0]!.points).toEqual([{ step: 2, actor: "alice", rating: 990, ci95: 50, games: 0 }]);
    expect(pools[1]!.opponents).toEqual([{ name: "random", rating: 1000 }]);
    expect(shapeEloRatings([{ name: "game/win", actor: "alice", step: 1, value: 1 }])).toEqual([]);
  });

  it("elo metrics belong to the Games section, beside win/draw/loss", () => {
    const groups = Object.fromEntries(groupMetrics(["reward/mean", "game/win", "elo/rating", "elo/opponent/random"]).map((g) => [g.title, g.names]));
    expect(groups.Games?.sort()).toEqual(["elo/opponent/random", "elo/rating", "game/win"]);
  });
});
