import type { RunnerEnv } from "../env";

/** The file descriptor on which the runtime writes its events (fd 0-2 are stdin/out/err). */
export const EVENTS_FD = 3;

export interface RuntimeCommand {
  executable: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Variables the runtime must never see: it knows nothing about our database or Redis. */
const WITHHELD = ["DATABASE_URL", "REDIS_URL"];

/**
 * `TROUPE_PYTHON -m troupe run spec.json --events-fd 3 --seq-start N --work-dir DIR`, the
 * runtime CLI of the common conventions. The child sees only its own GPUs (CUDA_VISIBLE_DEVICES,
 * empty for CPU runs), unbuffered Python output, and HF_HUB_OFFLINE as the runner has it.
 */
export function runtimeCommand(
  env: Pick<RunnerEnv, "python">,
  options: { specPath: string; workDir: string; seqStart: number; gpuIds: readonly number[]; childEnv?: Record<string, string> },
  parentEnv: NodeJS.ProcessEnv = process.env,
): RuntimeCommand {
  const childEnv: NodeJS.ProcessEnv = { ...parentEnv };
  for (const name of WITHHELD) delete childEnv[name];
  Object.assign(childEnv, options.childEnv, {
    PYTHONUNBUFFERED: "1",
    CUDA_VISIBLE_DEVICES: options.gpuIds.join(","),
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
    ],
    cwd: options.workDir,
    env: childEnv,
  };
}
