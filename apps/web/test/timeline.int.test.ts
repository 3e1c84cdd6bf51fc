import type { RunEvent } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBareRun, openServices, type TestServices } from "./helpers/services";

/** `timeline.ofRun` against real Postgres: memory readings and offload moves stored as a runner stores them. */

let services: TestServices;
let runId: string;
const GiB = 2 ** 30;

beforeAll(async () => {
  services = openServices();
  runId = await createBareRun(services);
  const events: RunEvent[] = [];
  let seq = 2;
  const ts = Date.now();
  for (let step = 1; step <= 20; step++) {
    for (const [actor, bytes] of [["alice", 6 * GiB], ["bob", 18 * GiB]] as const) {
      events.push({ seq: seq++, ts, type: "offload", step, actor, direction: "reload", parts: ["params", "optimizer"], phase: "update", bytes, seconds: 0.5 });
      events.push({ seq: seq++, ts, type: "memory", step, phase: "update", device: "cuda:0", actor, allocatedBytes: bytes + GiB });
      events.push({ seq: seq++, ts, type: "offload", step, actor, direction: "offload", parts: ["params", "optimizer"], phase: "update", bytes, seconds: 0.45 });
    }
    events.push({ seq: seq++, ts, type: "memory", step, phase: "rollout", device: "cuda:0", allocatedBytes: 3 * GiB });
  }
  await storeEvents(services.db, runId, events);
});

afterAll(async () => services?.close());

describe("timeline.ofRun", () => {
  it("the last 8 steps by default, each with its residency per phase and its moves", async () => {
    const viewer = await services.user("viewer", "timeline");
    const t = await viewer.caller.timeline.ofRun({ runId });
    expect(t.lastStep).toBe(20);
    expect(t.steps.map((s) => s.step)).toEqual([13, 14, 15, 16, 17, 18, 19, 20]);
    const slots = t.steps.at(-1)!.devices["cuda:0"]!;
    expect(slots.map((s) => [s.phase, s.actor, s.resident])).toEqual([
      ["update", "alice", ["alice"]],
      ["update", "bob", ["bob"]],
      ["rollout", null, []],
    ]);
    expect(slots[1]!.moves.map((m) => [m.direction, m.bytes, m.seconds])).toEqual([["reload", 18 * GiB, 0.5], ["offload", 18 * GiB, 0.45]]);
  });

  it("an earlier window starts from each actor's state before it; a bad window is refused naming the field", async () => {
    const t = await services.caller.timeline.ofRun({ runId, fromStep: 3, toStep: 4 });
    expect(t.steps.map((s) => s.step)).toEqual([3, 4]);
    expect(t.steps[0]!.devices["cuda:0"]!.map((s) => s.resident)).toEqual([["alice"], ["bob"], []]);
    await expect(services.caller.timeline.ofRun({ runId, fromStep: 5, toStep: 4 })).rejects.toThrow(/fromStep must not be after toStep/);
    await expect(services.caller.timeline.ofRun({ runId: "no-such-run" })).rejects.toThrow(/not found/);
  });
});
