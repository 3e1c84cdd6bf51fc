import { describeRuntimeExitCode, type RuntimeControlCommand, type RuntimeControlCommandName } from "@troupe/contracts";
import { errorLine } from "../io/dbRetry";
import type { ActiveRun, RunnerContext, StopReason } from "../context";
import { takeControlRequest } from "../control/takeControlRequest";
import { EventIngest, MAX_EVENT_LINE_CHARS } from "../ingest/eventIngest";
import { LogSink, MAX_LOG_LINE_CHARS } from "../ingest/logSink";
import { runtimeCommand } from "../process/runtimeCommand";
import { forRunUser } from "../process/runAs";
import { REPO_ROOT } from "../env";
import { RuntimeProcess, type ChildExit } from "../process/runtimeProcess";
import type { OutcomeFacts } from "./outcome";

export interface SuperviseInput {
  runId: string;
  workDir: string;
  specPath: string;
  /** First seq the runtime may use (the runner's `running` event took the one before). */
  seqStart: number;
  gpuIds: readonly number[];
  /** Checkpoint folder this attempt resumes from, when it continues a stopped or failed run. */
  resumeFrom?: string;
}

export type SupervisionResult = Omit<OutcomeFacts, "runnerId" | "cancelRequested" | "cancelGraceMs"> & {
  /**
   * The run was handed back for a runner shutdown: the runtime stopped after its step with a
   * checkpoint on our request (its `stopped` status was stored as a log line), or was never
   * started. It goes back to the queue instead of ending.
   */
  handedOver?: boolean;
};

/**
 * Runs the runtime for one claimed run and watches it until it is over: events and log lines
 * are ingested as they come, and a stop request (cancel, shutdown, lost ownership) becomes
 * SIGTERM, then SIGKILL after TROUPE_CANCEL_GRACE_MS. A hand-over (a runner shutting down) is a
 * `stop_after_step` command instead: the runtime ends its step, writes a checkpoint and exits, and
 * the run is requeued to resume. `run()` returns once the process has exited, its pipes have
 * ended and everything it wrote is stored (retried for up to TROUPE_DB_RETRY_MS while Postgres is
 * away). The heartbeat is the caller's (it lasts until the run is settled).
 */
export class RunSupervisor implements ActiveRun {
  private stopReason: StopReason | null = null;
  private handOverRequested = false;
  private process: RuntimeProcess | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private killedAfterGrace = false;
  /** Takes of stored commands, one at a time (a message and a heartbeat may ask together). */
  private controlTaking: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: RunnerContext, private readonly input: SuperviseInput) {}

  control(command: RuntimeControlCommandName): void {
    const line = JSON.stringify({ command } satisfies RuntimeControlCommand);
    const sent = this.process?.sendControl(line) ?? false;
    this.ctx.log.info(`run=${this.input.runId} control ${command}: ${sent ? "sent to the runtime" : "not sent (the runtime is not running)"}`);
  }

  applyRequestedControl(): Promise<void> {
    this.controlTaking = this.controlTaking.then(async () => {
      // Before the spawn or after the exit nobody could receive it: leave it stored for later.
      if (!this.process || this.process.hasExited || this.stopReason) return;
      try {
        const command = await takeControlRequest(this.ctx, this.input.runId);
        if (command) this.control(command);
      } catch (error) {
        this.ctx.log.warn(`run=${this.input.runId} could not read its control request (will retry): ${errorLine(error)}`);
      }
    });
    return this.controlTaking;
  }

  /** A runner shutdown: stop after the current step with a checkpoint, to be resumed by the next runner. */
  requestHandOver(): void {
    if (this.handOverRequested || this.stopReason) return;
    this.handOverRequested = true;
    if (!this.process || this.process.hasExited) return; // never started: nothing to stop
    this.ctx.log.info(`run=${this.input.runId} runner shutting down: asking the runtime to stop after its step with a checkpoint`);
    this.control("stop_after_step");
  }

  requestStop(reason: StopReason): void {
    if (this.stopReason) return;
    // After the exit there is nothing to stop, and the reason must not rewrite how it ended.
    if (this.process?.hasExited) return;
    this.stopReason = reason;
    this.ctx.log.info(`run=${this.input.runId} stop requested (${reason}): sending SIGTERM`);
    if (this.process) this.terminate(this.process);
  }

  async run(): Promise<SupervisionResult> {
    const { ctx, input } = this;
    const onStoreError = (error: unknown) => ctx.log.warn(`run=${input.runId} storing output failed (will retry): ${errorLine(error)}`);
    const logs = new LogSink(ctx.db, input.runId, await LogSink.firstFreeLineNo(ctx.db, input.runId), onStoreError, ctx.env.dbRetryMs);
    const events = new EventIngest(ctx.db, ctx.redis, input.runId, input.seqStart, logs, onStoreError, {
      giveUpAfterMs: ctx.env.dbRetryMs,
      handingOver: () => this.handOverRequested && !this.stopReason,
    });

    let exit: ChildExit | null = null;
    if (!this.stopReason && !this.handOverRequested) {
      const child = RuntimeProcess.start(
        forRunUser(runtimeCommand(ctx.env, { ...input, childEnv: ctx.childEnv }), { workRoot: ctx.env.workDir, repoRoot: REPO_ROOT }), // runAs.ts
        {
          onEventLine: (line, truncated) => events.handleLine(line, truncated),
          onStdout: (line, truncated) => logs.write("stdout", line, truncated),
          onStderr: (line, truncated) => logs.write("stderr", line, truncated),
        },
        { maxEventLineChars: MAX_EVENT_LINE_CHARS, maxLogLineChars: MAX_LOG_LINE_CHARS },
      );
      this.process = child;
      if (this.stopReason) this.terminate(child); // a stop that raced the spawn
      if (this.handOverRequested) this.control("stop_after_step");
      if (child.pid !== undefined) {
        // Only for killing an orphan after a runner crash: a database hiccup here must not end the run.
        await ctx.db.run
          .updateMany({ where: { id: input.runId, runnerId: ctx.env.runnerId }, data: { pid: child.pid } })
          .catch((error: unknown) => ctx.log.warn(`run=${input.runId} could not store its pid: ${errorLine(error)}`));
      }
      try {
        exit = await child.finished;
      } finally {
        if (this.killTimer) clearTimeout(this.killTimer);
      }
      logs.write("runner", exitLine(exit, child.pid));
    }

    let runnerError: string | undefined;
    for (const [what, sink] of [["events", events], ["log lines", logs]] as const) {
      try {
        await sink.drain();
      } catch (error) {
        runnerError ??= `could not store the run's ${what}: ${errorLine(error)}`;
      }
    }

    return {
      exit,
      terminalStatus: events.terminalStatus,
      lastError: events.lastError,
      stopReason: this.stopReason,
      killedAfterGrace: this.killedAfterGrace,
      tail: logs.tail.text(),
      ...(runnerError ? { runnerError } : {}),
      handedOver: !runnerError && !this.stopReason && this.handOverRequested && (exit === null || events.handedOver),
    };
  }

  private terminate(child: RuntimeProcess): void {
    child.signal("SIGTERM");
    this.killTimer = setTimeout(() => {
      if (child.hasExited) return;
      this.killedAfterGrace = true;
      this.ctx.log.warn(`run=${this.input.runId} runtime ignored SIGTERM for ${this.ctx.env.cancelGraceMs} ms: sending SIGKILL`);
      child.signal("SIGKILL");
    }, this.ctx.env.cancelGraceMs);
  }
}

function exitLine(exit: ChildExit, pid: number | undefined): string {
  if (exit.spawnError) return `runtime could not be started: ${exit.spawnError}`;
  const how = exit.signal ? `was killed by ${exit.signal}` : describeRuntimeExitCode(exit.code);
  return `runtime (pid ${pid}) ${how}${exit.pipesCut ? "; its output pipes were still open and were cut" : ""}`;
}
