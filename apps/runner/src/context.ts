import type { RuntimeControlCommandName } from "@troupe/contracts";
import type { EventStoreDb } from "@troupe/db";
import type { Redis } from "ioredis";
import type { RunnerEnv } from "./env";
import type { GpuSlots } from "./gpus/gpuSlots";
import type { RunnerLog } from "./log";

/** Why the runner asks a child to stop. */
export type StopReason =
  /** A person (web or API) cancelled the run. */
  | "cancel"
  /** The runner itself is shutting down (SIGTERM/SIGINT). */
  | "shutdown"
  /** The run row is no longer ours (another runner's sweeper failed it); stop wasting the GPU. */
  | "lost";

/** What the rest of the runner may do to a run it is supervising. */
export interface ActiveRun {
  requestStop(reason: StopReason): void;
  /** The runner is shutting down: stop after the current step with a checkpoint and requeue to resume. */
  requestHandOver(): void;
  /** Forwards a pause/resume/stop-after-step command to the runtime's control channel. */
  control(command: RuntimeControlCommandName): void;
  /**
   * Takes the command stored on the Run row (if any) and forwards it: what a control message or a
   * heartbeat triggers. Never throws; a command that cannot be taken yet stays stored.
   */
  applyRequestedControl(): Promise<void>;
}

/** Everything a feature module needs, passed explicitly (no globals), so tests build their own. */
export interface RunnerContext {
  db: EventStoreDb;
  /** Commands connection (streams, publish); never used for blocking reads or subscriptions. */
  redis: Redis;
  env: RunnerEnv;
  gpus: GpuSlots;
  /** Runs this runner process is supervising right now, by run id. */
  active: Map<string, ActiveRun>;
  log: RunnerLog;
  /**
   * Adds a queued run's job to the runs queue (idempotent), e.g. a run handed back at shutdown.
   * Absent in contexts without a queue; the queue reconciler of any runner then adds it.
   */
  enqueueRun?: (runId: string) => Promise<unknown>;
  /** Extra environment for runtime children (tests point PYTHONPATH at a stand-in runtime). */
  childEnv?: Record<string, string>;
}
