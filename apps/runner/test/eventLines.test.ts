import type { RunEvent } from "@troupe/contracts";
import { deriveRows } from "@troupe/db";
import { describe, expect, it } from "vitest";
import { parseControlMessage } from "../src/control/controlSubscriber";
import { parseEventLine } from "../src/ingest/eventIngest";

describe("parseEventLine", () => {
  it("accepts a contracts RunEvent and fills schema defaults", () => {
    const r = parseEventLine(
      JSON.stringify({ seq: 3, ts: 5, type: "episode", step: 1, environment: "e", group: 0, sample: 1, messages: [], reward: 1 }),
    );
    expect(r).toEqual({ ok: true, value: expect.objectContaining({ type: "episode", rewardComponents: {} }) });
  });

  it("explains why a line is refused, never throws", () => {
    expect(parseEventLine("not json")).toMatchObject({ ok: false, reason: expect.stringMatching(/^not JSON/) });
    expect(parseEventLine(JSON.stringify({ seq: 3, ts: 5, type: "metric", step: -1, values: {} }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^step:/),
    });
    expect(parseEventLine(JSON.stringify({ seq: 3, ts: 5, type: "nope" }))).toMatchObject({ ok: false });
    expect(parseEventLine(null)).toEqual({ ok: false, reason: "line too long" });
  });

  it("replaces NUL characters, which Postgres jsonb refuses", () => {
    const r = parseEventLine(JSON.stringify({ seq: 1, ts: 1, type: "log", level: "info", message: "a\u0000b" }));
    expect(r.ok && r.value.type === "log" && r.value.message).toBe("a\uFFFDb");
  });
});

describe("deriveRows", () => {
  it("makes one metric point per value, memory and episode rows, and the max seq and step", () => {
    const events: RunEvent[] = [
      { seq: 2, ts: 1000, type: "metric", step: 4, actor: "bob", values: { loss: 0.5, "reward/mean": 1 } },
      { seq: 3, ts: 1000, type: "metric", step: 5, values: { lr: 0.1 } },
      { seq: 4, ts: 1000, type: "memory", step: 5, phase: "update", device: "cuda:0", allocatedBytes: 1.5e9 },
      { seq: 5, ts: 1000, type: "log", level: "info", message: "hi" },
    ];
    const rows = deriveRows("run1", events);
    expect(rows.events.map((e) => e.seq)).toEqual([2, 3, 4, 5]);
    expect(rows.metrics).toEqual([
      { runId: "run1", name: "loss", actor: "bob", step: 4, value: 0.5, ts: new Date(1000) },
      { runId: "run1", name: "reward/mean", actor: "bob", step: 4, value: 1, ts: new Date(1000) },
      { runId: "run1", name: "lr", actor: "", step: 5, value: 0.1, ts: new Date(1000) },
    ]);
    expect(rows.memory[0]).toMatchObject({ seq: 4, device: "cuda:0", actor: "", allocatedBytes: 1_500_000_000n, rssBytes: null });
    expect(rows.maxSeq).toBe(5);
    expect(rows.maxStep).toBe(5);
    expect(deriveRows("run1", [events[3]!]).maxStep).toBeNull();
  });
});

describe("parseControlMessage", () => {
  it("accepts the control actions and refuses anything else with a reason", () => {
    expect(parseControlMessage('{"runId":"r","action":"cancel"}')).toEqual({ ok: true, value: { runId: "r", action: "cancel" } });
    for (const action of ["pause", "resume", "stop_after_step"]) {
      expect(parseControlMessage(JSON.stringify({ runId: "r", action }))).toEqual({ ok: true, value: { runId: "r", action } });
    }
    expect(parseControlMessage('{"runId":"r","action":"reboot"}')).toMatchObject({ ok: false, reason: expect.stringMatching(/^action/) });
    expect(parseControlMessage("{")).toEqual({ ok: false, reason: "not JSON" });
  });
});
