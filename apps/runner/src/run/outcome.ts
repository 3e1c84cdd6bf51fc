import { describeRuntimeExitCode, type RunEvent, type StatusEvent } from "@troupe/contracts";
import type { StopReason } from "../context";
import type { ChildExit } from "../process/runtimeProcess";

type ErrorEvent = Extract<RunEvent, { type: "error" }>;

export interface OutcomeFacts {
  runnerId: string;
  exit: ChildExit | null;
  /** The runtime's own final status event, if it sent one. */
  terminalStatus: StatusEvent | null;
  lastError: ErrorEvent | null;
  stopReason: StopReason | null;
  /** A person asked for the cancel (pub/sub or Run.cancelRequestedAt). */
  cancelRequested: boolean;
  killedAfterGrace: boolean;
  cancelGraceMs: number;
  /** The run's last log lines. */
  tail: string;
  /** Set when the runner itself failed while supervising (e.g. events could not be stored). */
  runnerError?: string;
}

export interface Outcome {
  to: "succeeded" | "failed" | "cancelled" | "stopped";
  /** The runtime's status event to adopt (no new event is written), when it reported one. */
  recordedEvent?: StatusEvent;
  /** Text of the status event the runner writes when the runtime did not. */
  message: string;
  /** Run.error: why it failed or was cancelled; null when it succeeded. */
  error: string | null;
}

const TAIL_LINES_IN_ERROR = 20;

/**
 * Decides how a supervised run ends. The runtime's own final status wins when it sent one (it
 * knows best, and the last status event then always matches the row: a run that finished its
 * last step just as a cancel arrived is `succeeded`). Otherwise a requested cancel makes it
 * `cancelled`, and anything else (crash, kill, exit without a final status) `failed`, with the
 * exit code or signal and the log tail in `error`.
 */
export function decideOutcome(f: OutcomeFacts): Outcome {
  if (f.runnerError) {
    return { to: "failed", message: `runner error: ${f.runnerError}`, error: `The runner failed while supervising the run: ${f.runnerError}` };
  }
  if (f.terminalStatus) {
    const to = f.terminalStatus.state as Outcome["to"];
    return { to, recordedEvent: f.terminalStatus, message: f.terminalStatus.message ?? to, error: reportedError(f, to) };
  }
  const how = describeExit(f);
  // A runtime that never started had nothing to report: "never started without reporting" read as nonsense.
  const silent = f.exit ? " without reporting a final status" : "";
  if (f.cancelRequested || f.stopReason === "cancel") {
    return { to: "cancelled", message: `cancelled; the runtime ${how}`, error: `Cancelled on request; the runtime ${how}${silent}.` };
  }
  if (f.stopReason === "shutdown") {
    return { to: "failed", message: `runner ${f.runnerId} shut down; the runtime ${how}`, error: `Runner ${f.runnerId} shut down while the run was running; the runtime ${how}${silent}.${tailBlock(f.tail)}` };
  }
  const lastError = f.lastError ? `\nLast error reported: ${errorText(f.lastError)}` : "";
  return {
    to: "failed",
    message: `the runtime ${how}${silent}`,
    error: `The runtime ${how}${silent}.${lastError}${tailBlock(f.tail)}`,
  };
}

function reportedError(f: OutcomeFacts, to: Outcome["to"]): string | null {
  if (to === "succeeded" || to === "stopped") return null;
  if (to === "cancelled") {
    return f.stopReason === "shutdown" && !f.cancelRequested
      ? `Stopped because runner ${f.runnerId} shut down.`
      : "Cancelled on request.";
  }
  if (f.lastError) return errorText(f.lastError);
  return f.terminalStatus?.message ?? `The runtime reported failure.${tailBlock(f.tail)}`;
}

function errorText(e: ErrorEvent): string {
  const where = e.field ? `spec field \`${e.field}\`: ` : "";
  return `${where}${e.message}`;
}

export function describeExit(f: Pick<OutcomeFacts, "exit" | "killedAfterGrace" | "cancelGraceMs">): string {
  const exit = f.exit;
  if (!exit) return "was never started";
  if (exit.spawnError) return `could not be started (${exit.spawnError})`;
  if (f.killedAfterGrace) return `was killed with SIGKILL after not stopping within ${f.cancelGraceMs} ms of SIGTERM`;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return describeRuntimeExitCode(exit.code);
}

function tailBlock(tail: string): string {
  const lines = tail.split("\n").slice(-TAIL_LINES_IN_ERROR).join("\n").trim();
  return lines ? `\n\nLast log lines:\n${lines}` : "";
}
