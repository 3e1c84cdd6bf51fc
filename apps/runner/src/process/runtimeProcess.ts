import { spawn, type ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { splitLines } from "../io/lineSplitter";
import { CONTROL_FD, EVENTS_FD, type RuntimeCommand } from "./runtimeCommand";

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (missing interpreter…). */
  spawnError?: string;
  /** True when its pipes were still open after it exited (a grandchild held them) and were cut. */
  pipesCut?: boolean;
}

export interface RuntimeOutput {
  onEventLine(line: string, truncated: boolean): void;
  onStdout(line: string, truncated: boolean): void;
  onStderr(line: string, truncated: boolean): void;
}

export interface RuntimeProcessOptions {
  maxEventLineChars: number;
  maxLogLineChars: number;
  /** How long to wait for the pipes to close after the process exited. */
  pipeCloseGraceMs?: number;
}

/**
 * One runtime child in a process group of its own (so a signal reaches whatever it started,
 * e.g. `accelerate launch` workers). `finished` resolves once the process has exited AND its
 * stdout, stderr and events pipes have ended, so every line it wrote has been handed out.
 */
export class RuntimeProcess {
  readonly finished: Promise<ChildExit>;
  private exited = false;

  private constructor(private readonly child: ChildProcess, output: RuntimeOutput, options: RuntimeProcessOptions) {
    // A command written as the process exits fails with EPIPE: nothing to do, the run is ending anyway.
    (child.stdio[CONTROL_FD] as Writable | null | undefined)?.on("error", () => undefined);
    this.finished = this.watch(output, options);
  }

  static start(command: RuntimeCommand, output: RuntimeOutput, options: RuntimeProcessOptions): RuntimeProcess {
    const child = spawn(command.executable, command.args, {
      cwd: command.cwd,
      env: command.env,
      stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
      detached: true,
    });
    return new RuntimeProcess(child, output, options);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.exited;
  }

  /**
   * Writes one control line (`{"command": ...}`) to the runtime's control pipe. Returns false when
   * the pipe is gone (the process ended); the runtime acts on it at its next step boundary.
   */
  sendControl(line: string): boolean {
    const pipe = this.child.stdio[CONTROL_FD] as Writable | null | undefined;
    if (!pipe || this.exited || pipe.destroyed) return false;
    pipe.write(line.endsWith("\n") ? line : `${line}\n`);
    return true;
  }

  /** Signals the whole process group; falls back to the child alone if the group is gone. */
  signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined || this.exited) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  private async watch(output: RuntimeOutput, options: RuntimeProcessOptions): Promise<ChildExit> {
    const child = this.child;
    const pipes = [child.stdout, child.stderr, child.stdio[EVENTS_FD]] as Readable[];
    const pipesDone = Promise.all([
      splitLines(pipes[0]!, output.onStdout, options.maxLogLineChars),
      splitLines(pipes[1]!, output.onStderr, options.maxLogLineChars),
      splitLines(pipes[2]!, output.onEventLine, options.maxEventLineChars),
    ]);

    const exit = await new Promise<ChildExit>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      child.once("error", (error) => {
        // 'error' without a pid: the process never started, and no 'exit' will follow.
        if (child.pid === undefined) resolve({ code: null, signal: null, spawnError: error.message });
      });
    });
    this.exited = true;

    const graceMs = options.pipeCloseGraceMs ?? 5_000;
    let timer: NodeJS.Timeout | undefined;
    const closedInTime = await Promise.race([
      pipesDone.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (!closedInTime) {
      // Something it started still holds the pipes: end the group and stop reading.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // group already gone
        }
      }
      for (const pipe of pipes) pipe.destroy();
      await pipesDone;
      return { ...exit, pipesCut: true };
    }
    return exit;
  }
}
