import { deriveRows } from "@troupe/db";
import { describe, expect, it } from "vitest";
import { parseEventLine } from "../src/ingest/eventIngest";

/**
 * The runtime's `offload` events (issue 14) need nothing of their own in the runner: a line is parsed
 * with the contracts' RunEvent and stored as a RunEvent row like any other event. This pins that down.
 */
describe("offload event lines", () => {
  const line = { seq: 12, ts: 5, type: "offload", step: 3, actor: "alice", direction: "offload", parts: ["params", "optimizer"], phase: "update", bytes: 6442450944, seconds: 0.41 };

  it("are accepted and stored as an event row only (no metric, memory or episode rows)", () => {
    const parsed = parseEventLine(JSON.stringify(line));
    expect(parsed).toEqual({ ok: true, value: line });
    const rows = deriveRows("run1", parsed.ok ? [parsed.value] : []);
    expect(rows.events).toEqual([{ runId: "run1", seq: 12, type: "offload", ts: new Date(5), payload: line }]);
    expect([rows.metrics, rows.memory, rows.episodes]).toEqual([[], [], []]);
    expect(rows.maxStep).toBe(3);
  });

  it("are refused with the field when malformed", () => {
    expect(parseEventLine(JSON.stringify({ ...line, direction: "sideways" }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^direction:/) });
    expect(parseEventLine(JSON.stringify({ ...line, bytes: -1 }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^bytes:/) });
  });
});
