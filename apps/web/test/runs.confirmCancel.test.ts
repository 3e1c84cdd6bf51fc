import { describe, expect, it } from "vitest";
import { cancelConfirmation, LONG_RUN_MS } from "../src/features/runs/lib/confirmCancel";

/** Cancelling a run that has trained a while asks first; a fresh or queued one does not. */
const now = Date.parse("2026-11-25T03:00:00Z");
const started = (msAgo: number) => new Date(now - msAgo);

describe("cancelConfirmation", () => {
  it("asks for a run that has trained longer than 5 minutes, saying what is lost", () => {
    const q = cancelConfirmation({ name: "long", status: "running", startedAt: started(LONG_RUN_MS + 7 * 60_000), lastStep: 412 }, now);
    expect(q).toMatch(/^Cancel "long"\? It has trained 412 steps over 12 min; .*lost/);
    expect(cancelConfirmation({ name: "p", status: "paused", startedAt: started(LONG_RUN_MS), lastStep: 3 }, now)).not.toBeNull();
  });

  it("does not ask for a fresh, queued or ended run", () => {
    expect(cancelConfirmation({ name: "fresh", status: "running", startedAt: started(60_000) }, now)).toBeNull();
    expect(cancelConfirmation({ name: "q", status: "queued", startedAt: null }, now)).toBeNull();
    expect(cancelConfirmation({ name: "done", status: "succeeded", startedAt: started(3_600_000) }, now)).toBeNull();
  });
});
