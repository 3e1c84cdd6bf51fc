import type { OffloadEvent } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { memoryPlot } from "../src/features/runs/lib/memoryPlot";
import { describeMarker, mergeOffloads, mergeTotals, plotMarkers } from "../src/features/runs/lib/offloadMarks";
import { ACTOR_COLOURS } from "../src/features/runs/lib/specNames";
import type { OffloadMarker, RunOffloads } from "../src/features/runs/server/offloads";

const GiB = 2 ** 30;
const move = (seq: number, step: number, actor: string, direction: "offload" | "reload", bytes = GiB, seconds = 0.5): OffloadMarker => ({
  actor,
  direction,
  firstStep: step,
  lastStep: step,
  count: 1,
  bytes,
  seconds,
  parts: ["params", "optimizer"],
  phase: "update",
  seq,
});
const liveMove = (seq: number, step: number, actor: string, direction: "offload" | "reload"): OffloadEvent => ({
  seq,
  ts: 0,
  type: "offload",
  step,
  actor,
  direction,
  bytes: 2 * GiB,
  seconds: 0.25,
});

describe("offload marks on the memory timeline", () => {
  it("adds live moves the stored answer has not covered, once", () => {
    const stored: RunOffloads = { markers: [move(5, 1, "alice", "reload"), move(7, 1, "alice", "offload")], totals: [], bucketWidth: 1 };
    // seq 7 is in both (stored since it arrived live); 9 is new.
    const merged = mergeOffloads(stored, [liveMove(7, 1, "alice", "offload"), liveMove(9, 2, "bob", "reload")]);
    expect(merged.map((m) => [m.seq, m.actor, m.direction, m.lastStep])).toEqual([
      [5, "alice", "reload", 1],
      [7, "alice", "offload", 1],
      [9, "bob", "reload", 2],
    ]);
    expect(mergeOffloads(undefined, [liveMove(3, 1, "bob", "offload")])).toHaveLength(1);
  });

  it("adds the live moves after the stored answer to its totals, so the table is current without polling", () => {
    const stored: RunOffloads = {
      markers: [move(5, 1, "alice", "reload"), move(7, 1, "alice", "offload")],
      totals: [
        { actor: "alice", direction: "offload", count: 1, bytes: GiB, seconds: 0.5, firstStep: 1, lastStep: 1 },
        { actor: "alice", direction: "reload", count: 1, bytes: GiB, seconds: 0.5, firstStep: 1, lastStep: 1 },
      ],
      bucketWidth: 1,
    };
    expect(mergeTotals(stored, [liveMove(7, 1, "alice", "offload"), liveMove(9, 2, "alice", "offload"), liveMove(10, 2, "bob", "reload")])).toEqual([
      { actor: "alice", direction: "offload", count: 2, bytes: 3 * GiB, seconds: 0.75, firstStep: 1, lastStep: 2 },
      { actor: "alice", direction: "reload", count: 1, bytes: GiB, seconds: 0.5, firstStep: 1, lastStep: 1 },
      { actor: "bob", direction: "reload", count: 1, bytes: 2 * GiB, seconds: 0.25, firstStep: 2, lastStep: 2 },
    ]);
  });

  it("gives each actor two rows (offloads, reloads) in its spec colour, ▲ for a reload", () => {
    const marks = plotMarkers([move(1, 3, "bob", "offload"), move(2, 3, "alice", "reload"), move(3, 4, "carol", "offload")], ["alice", "bob"]);
    expect(marks).toEqual([
      { x: 3, colour: ACTOR_COLOURS[1], up: false, row: 2 },
      { x: 3, colour: ACTOR_COLOURS[0], up: true, row: 1 },
      // An actor the spec does not name comes after the spec's, in its own rows.
      { x: 4, colour: expect.any(String), up: false, row: 4 },
    ]);
  });

  it("says what moved, how much and how long; a bucket says how many moves over which steps", () => {
    expect(describeMarker(move(1, 3, "alice", "offload", 6 * GiB, 0.4321))).toBe("offload alice params + optimizer (after update): 6.00 GiB in 0.432 s");
    expect(describeMarker({ ...move(1, 3, "bob", "reload", 30 * GiB, 12.5), count: 16, firstStep: 0, lastStep: 15, parts: null, phase: null })).toBe(
      "16 reloads of bob, steps 0–15: 30.0 GiB in 12.5 s",
    );
  });

  it("puts a move at a step without samples on the x axis, and its tooltip at that step", () => {
    const plot = memoryPlot(
      {
        series: [{ key: "update", phase: "update", actor: "", label: "update", samples: 2 }],
        rows: [
          { step: 1, update: 100 },
          { step: 3, update: 120 },
        ],
        points: 2,
        peakBytes: 120 * 2 ** 20,
      },
      new Set(),
      { markers: [move(9, 2, "alice", "offload", GiB, 0.125)], actors: ["alice"] },
    );
    expect(plot.data).toEqual([
      [1, 2, 3],
      [100, null, 120],
    ]);
    expect(plot.markers).toEqual([{ x: 2, colour: ACTOR_COLOURS[0], up: false, row: 0 }]);
    expect(plot.tooltip(1)).toEqual([{ label: "step 2" }, { label: expect.stringContaining("offload alice"), value: "▼", colour: ACTOR_COLOURS[0] }]);
    expect(plot.tooltip(0).map((l) => l.label)).toEqual(["step 1", "update"]);
  });
});
