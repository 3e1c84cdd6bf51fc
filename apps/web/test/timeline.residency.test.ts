import { describe, expect, it } from "vitest";
import { buildTimeline, slotLabel, type TimelineMove, type TimelineSample } from "../src/features/timeline/lib/residencyTimeline";

/**
 * The GPU timeline from memory readings and offload moves: two actors taking turns on cuda:0 with
 * between-phase offload (as the residency manager reports it, and as simulate-run --offload plays it).
 */

const GiB = 2 ** 30;
let seq = 0;
const sample = (step: number, phase: string, actor: string | null = null, device = "cuda:0"): TimelineSample => ({ seq: ++seq, step, phase, device, actor });
const move = (step: number, actor: string, direction: "offload" | "reload", bytes = 6 * GiB): TimelineMove => ({
  seq: ++seq, step, actor, direction, parts: ["params", "optimizer"], phase: "update", bytes, seconds: 0.5,
});

function turns(step: number) {
  const samples: TimelineSample[] = [];
  const moves: TimelineMove[] = [];
  for (const actor of ["alice", "bob"]) {
    moves.push(move(step, actor, "reload"));
    samples.push(sample(step, "update", actor));
    moves.push(move(step, actor, "offload"));
  }
  samples.push(sample(step, "rollout"));
  return { samples, moves };
}

describe("GPU timeline", () => {
  it("shows one model resident per update and none at rollout, each move on its slot with bytes and seconds", () => {
    const a = turns(1);
    const b = turns(2);
    const t = buildTimeline([...a.samples, ...b.samples], [...a.moves, ...b.moves]);
    expect(t.devices).toEqual(["cuda:0"]);
    expect(t.actors).toEqual(["alice", "bob"]);
    expect(t.steps.map((s) => s.step)).toEqual([1, 2]);
    const slots = t.steps[1]!.devices["cuda:0"]!;
    expect(slots.map(slotLabel)).toEqual(["update · alice", "update · bob", "rollout"]);
    expect(slots.map((s) => s.resident)).toEqual([["alice"], ["bob"], []]);
    expect(slots[0]!.moves.map((m) => [m.actor, m.direction])).toEqual([["alice", "reload"], ["alice", "offload"]]);
    expect(slots[1]!.moves.map((m) => [m.actor, m.direction, m.bytes, m.seconds])).toEqual([
      ["bob", "reload", 6 * GiB, 0.5],
      ["bob", "offload", 6 * GiB, 0.5],
    ]);
    expect(slots[2]!.moves).toEqual([]);
  });

  it("without moves every actor stays resident on its own device; a window starts from the state before it", () => {
    const t = buildTimeline([sample(1, "rollout"), sample(1, "update", "alice"), sample(1, "update", "bob", "cuda:1")], []);
    expect(t.devices).toEqual(["cuda:0", "cuda:1"]);
    expect(t.steps[0]!.devices["cuda:0"]!.map((s) => s.resident)).toEqual([["alice"], ["alice"]]);
    expect(t.steps[0]!.devices["cuda:1"]!.map((s) => s.resident)).toEqual([["bob"]]);
    // alice was offloaded before the window (her last earlier move): not resident until she is reloaded.
    const w = buildTimeline([sample(5, "rollout"), sample(5, "update", "alice")], [], { alice: false });
    expect(w.steps[0]!.devices["cuda:0"]!.map((s) => s.resident)).toEqual([[], []]);
  });
});
