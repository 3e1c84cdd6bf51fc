import type { RunnerEnv } from "../env";
import { runtimeEnv } from "./childEnv";

/** The file descriptor on which the runtime writes its events (fd 0-2 are stdin/out/err). */
export const EVENTS_FD = 3;
/** The file descriptor on which the runner writes control commands (JSON lines) to the runtime. */
export const CONTROL_FD = 4;

export interface RuntimeCommand {
  executable: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * `TROUPE_PYTHON -m troupe run spec.json --events-fd 3 --seq-start N --work-dir DIR --control-fd 4
 * [--resume CHECKPOINT]`, the
 * runtime CLI of the common conventions. The child sees only its own GPUs (CUDA_VISIBLE_DEVICES,
 * empty for CPU runs; TROUPE_GPU_IDS the same host indices, which the runtime maps placements through), unbuffered Python output, and an environment built from an allowlist (childEnv.ts).
 */
export function runtimeCommand(
  env: Pick<RunnerEnv, "python">,
  options: {
    specPath: string;
    workDir: string;
    seqStart: number;
    gpuIds: readonly number[];
    childEnv?: Record<string, string>;
    /** Checkpoint folder to resume from (a new attempt of a stopped or failed run). */
    resumeFrom?: string;
  },
  parentEnv: NodeJS.ProcessEnv = process.env,
): RuntimeCommand {
  const childEnv = runtimeEnv(parentEnv, {
    ...options.childEnv,
    PYTHONUNBUFFERED: "1",
    CUDA_VISIBLE_DEVICES: options.gpuIds.join(","),
    // The host numbers of the devices it sees (CUDA renumbers them from 0): `placement.gpus` names these.
    TROUPE_GPU_IDS: options.gpuIds.join(","),
  });
  return {
    executable: env.python,
    args: [
      "-m",
      "troupe",
      "run",
      options.specPath,
      "--events-fd",
      String(EVENTS_FD),
      "--seq-start",
      String(options.seqStart),
      "--work-dir",
      options.workDir,
      "--control-fd",
      String(CONTROL_FD),
      ...(options.resumeFrom ? ["--resume", options.resumeFrom] : []),
    ],
    cwd: options.workDir,
    env: childEnv,
  };
}
