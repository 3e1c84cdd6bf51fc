import type { StatusEvent } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { decideOutcome, describeExit, type OutcomeFacts } from "../src/run/outcome";

const facts = (over: Partial<OutcomeFacts> = {}): OutcomeFacts => ({
  runnerId: "r1",
  exit: { code: 0, signal: null },
  terminalStatus: null,
  lastError: null,
  stopReason: null,
  cancelRequested: false,
  killedAfterGrace: false,
  cancelGraceMs: 10_000,
  tail: "line a\nline b",
  ...over,
});
const status = (state: StatusEvent["state"], message?: string): StatusEvent => ({ seq: 9, ts: 1, type: "status", state, ...(message ? { message } : {}) });

describe("decideOutcome", () => {
  it("adopts the runtime's own final status without a new event", () => {
    const o = decideOutcome(facts({ terminalStatus: status("succeeded", "done") }));
    expect(o).toMatchObject({ to: "succeeded", error: null, message: "done" });
    expect(o.recordedEvent?.seq).toBe(9);
  });

  it("adopts `stopped` (stop after a step, exit code 4) as its own end, with no error", () => {
    const o = decideOutcome(facts({ exit: { code: 4, signal: null }, terminalStatus: status("stopped", "stopped after step 3 of 10 on request") }));
    expect(o).toMatchObject({ to: "stopped", error: null, message: "stopped after step 3 of 10 on request" });
  });

  it("uses the runtime's last error event (with its spec field) when it reported failure", () => {
    const o = decideOutcome(
      facts({ exit: { code: 2, signal: null }, terminalStatus: status("failed"), lastError: { seq: 8, ts: 1, type: "error", message: "bad value", field: "trainer.steps" } }),
    );
    expect(o).toMatchObject({ to: "failed", error: "spec field `trainer.steps`: bad value" });
  });

  it("fails a crash with the exit code and the log tail", () => {
    const o = decideOutcome(facts({ exit: { code: 7, signal: null } }));
    expect(o.to).toBe("failed");
    expect(o.recordedEvent).toBeUndefined();
    expect(o.error).toContain("exited with code 7 without reporting a final status");
    expect(o.error).toContain("Last log lines:\nline a\nline b");
  });

  it("names the signal that killed it", () => {
    expect(decideOutcome(facts({ exit: { code: null, signal: "SIGSEGV" } })).error).toContain("was killed by SIGSEGV");
  });

  it("a requested cancel without a runtime status is cancelled, naming the SIGKILL", () => {
    const o = decideOutcome(facts({ exit: { code: null, signal: "SIGKILL" }, stopReason: "cancel", killedAfterGrace: true, cancelGraceMs: 500 }));
    expect(o.to).toBe("cancelled");
    expect(o.error).toContain("SIGKILL after not stopping within 500 ms of SIGTERM");
  });

  it("a cancel before the runtime started says so plainly (nothing was there to report a status)", () => {
    const o = decideOutcome(facts({ exit: null, cancelRequested: true }));
    expect(o.to).toBe("cancelled");
    expect(o.error).toBe("Cancelled on request; the runtime was never started.");
  });

  it("a runtime that finished as the cancel arrived stays succeeded", () => {
    expect(decideOutcome(facts({ terminalStatus: status("succeeded"), cancelRequested: true })).to).toBe("succeeded");
  });

  it("a runner shutdown without a runtime status is a failure that says so", () => {
    const o = decideOutcome(facts({ exit: { code: null, signal: "SIGKILL" }, stopReason: "shutdown", killedAfterGrace: true }));
    expect(o.to).toBe("failed");
    expect(o.error).toMatch(/^Runner r1 shut down/);
  });

  it("a runner error wins over anything the runtime said", () => {
    const o = decideOutcome(facts({ terminalStatus: status("succeeded"), runnerError: "could not store events: db away" }));
    expect(o).toMatchObject({ to: "failed" });
    expect(o.error).toContain("db away");
  });

  it("a runtime that could not be started says why", () => {
    expect(decideOutcome(facts({ exit: { code: null, signal: null, spawnError: "spawn nope ENOENT" } })).error).toContain("could not be started (spawn nope ENOENT)");
  });
});

describe("runtime exit codes in words", () => {
  it("a known code says what it means; an unknown one stays a number", () => {
    expect(describeExit({ exit: { code: 4, signal: null }, killedAfterGrace: false, cancelGraceMs: 1000 } as never)).toBe(
      "exited with code 4 (stopped on request after saving a checkpoint; resume continues from it)",
    );
    expect(describeExit({ exit: { code: 2, signal: null }, killedAfterGrace: false, cancelGraceMs: 1000 } as never)).toMatch(/code 2 \(refused the spec/);
    expect(describeExit({ exit: { code: 7, signal: null }, killedAfterGrace: false, cancelGraceMs: 1000 } as never)).toBe("exited with code 7");
    expect(describeExit({ exit: { code: 0, signal: null }, killedAfterGrace: false, cancelGraceMs: 1000 } as never)).toBe("exited with code 0");
  });
});
