import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { detectGpuCount } from "./gpus/detectGpus";
import { actorKeyEnvs, KeyEnvListError } from "./process/childEnv";

/** The repository root, found from this file (apps/runner/src → ../../..), never hard-coded. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

const integer = (min: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number ≥ ${min}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be ≥ ${min}`));

const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .min(1, "is required")
    .refine((v) => protocols.some((p) => v.startsWith(`${p}://`)), `must be a ${protocols.join(":// or ")}:// URL`);

/** Raw variables as strings; empty strings count as unset so `FOO= cmd` falls back to the default. */
const RawEnv = z.object({
  DATABASE_URL: url(["postgresql", "postgres"]),
  REDIS_URL: url(["redis", "rediss"]),
  TROUPE_PYTHON: z.string().min(1).optional(),
  TROUPE_WORK_DIR: z.string().min(1).optional(),
  TROUPE_RUNNER_ID: z.string().regex(/^[\w.@:-]{1,128}$/, "must be 1-128 letters, digits or . _ - @ :").optional(),
  TROUPE_RUNNER_CONCURRENCY: integer(1).optional(),
  TROUPE_RUNNER_GPUS: integer(0).optional(),
  TROUPE_CANCEL_GRACE_MS: integer(0).optional(),
  TROUPE_STALL_TIMEOUT_MS: integer(1000).optional(),
  /** How often a supervised run's heartbeat is written (default: stall timeout / 6, at most 5 s). */
  TROUPE_HEARTBEAT_MS: integer(100).optional(),
  /** On SIGTERM/SIGINT: how long runs may take to finish their step and checkpoint before they are cancelled. */
  TROUPE_SHUTDOWN_GRACE_MS: integer(0).optional(),
  /** How long a run's final writes (last events, log lines, final status) are retried while Postgres is away. */
  TROUPE_DB_RETRY_MS: integer(0).optional(),
  /** How often the runner checks that Redis still holds the queue (a flushed or restarted Redis); 0 = never (a runner sharing a test database). */
  TROUPE_REQUEUE_CHECK_MS: integer(0).optional(),
  /** How often every queued run's job is checked, whatever the check above says. */
  TROUPE_REQUEUE_SWEEP_MS: integer(1000).optional(),
  /** How often this runner's presence (GPUs, which run holds each, capabilities) is written to Postgres; 3 missed beats = gone. */
  TROUPE_PRESENCE_MS: integer(100).optional(),
  /** How often the runtime's capabilities are probed again (a package installed or removed since start shows up). */
  TROUPE_CAPABILITIES_MS: integer(100).optional(),
});

export interface RunnerEnv {
  databaseUrl: string;
  redisUrl: string;
  python: string;
  workDir: string;
  runnerId: string;
  concurrency: number;
  gpus: number;
  cancelGraceMs: number;
  stallTimeoutMs: number;
  heartbeatMs: number;
  shutdownGraceMs: number;
  dbRetryMs: number;
  requeueCheckMs: number;
  requeueSweepMs: number;
  presenceMs: number;
  capabilitiesMs: number;
}

export class EnvError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`${variable} ${detail}`);
    this.name = "EnvError";
  }
}

export interface LoadEnvOptions {
  /** Counts this host's GPUs when TROUPE_RUNNER_GPUS is unset (nvidia-smi by default). */
  detectGpus?: () => number;
}

/** Validates the runner's environment; throws an EnvError naming the first bad variable. */
export function loadRunnerEnv(source: NodeJS.ProcessEnv = process.env, options: LoadEnvOptions = {}): RunnerEnv {
  const present = Object.fromEntries(
    Object.entries(source).filter(([k, v]) => k in RawEnv.shape && v !== undefined && v.trim() !== ""),
  );
  const parsed = RawEnv.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? "environment");
    const shown = variable in present ? ` (got ${JSON.stringify(present[variable])})` : "";
    const detail = issue.code === "invalid_type" && !(variable in present) ? "is required" : issue.message;
    throw new EnvError(variable, `${detail}${shown}`);
  }
  const env = parsed.data;
  try {
    actorKeyEnvs(source); // TROUPE_ACTOR_KEY_ENVS may name no secret of Troupe's (issue 30)
  } catch (e) {
    if (e instanceof KeyEnvListError) throw new EnvError("TROUPE_ACTOR_KEY_ENVS", e.message.replace(/^TROUPE_ACTOR_KEY_ENVS /, ""));
    throw e;
  }
  const stallTimeoutMs = env.TROUPE_STALL_TIMEOUT_MS ?? 60_000;
  const heartbeatMs = env.TROUPE_HEARTBEAT_MS ?? Math.min(5_000, Math.floor(stallTimeoutMs / 6));
  if (heartbeatMs * 2 > stallTimeoutMs) {
    throw new EnvError(
      "TROUPE_HEARTBEAT_MS",
      `must be at most half of TROUPE_STALL_TIMEOUT_MS (${stallTimeoutMs}), got ${heartbeatMs}: a live run would look stalled`,
    );
  }
  if (env.TROUPE_REQUEUE_CHECK_MS !== undefined && env.TROUPE_REQUEUE_CHECK_MS > 0 && env.TROUPE_REQUEUE_CHECK_MS < 100) {
    throw new EnvError("TROUPE_REQUEUE_CHECK_MS", `must be 0 (off) or at least 100, got ${env.TROUPE_REQUEUE_CHECK_MS}`);
  }
  const venvPython = resolve(REPO_ROOT, ".venv/bin/python");
  return {
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    python: env.TROUPE_PYTHON ?? (existsSync(venvPython) ? venvPython : "python3"),
    workDir: resolve(env.TROUPE_WORK_DIR ?? resolve(REPO_ROOT, ".troupe/runs")),
    runnerId: env.TROUPE_RUNNER_ID ?? hostname(),
    concurrency: env.TROUPE_RUNNER_CONCURRENCY ?? 1,
    gpus: env.TROUPE_RUNNER_GPUS ?? (options.detectGpus ?? detectGpuCount)(),
    cancelGraceMs: env.TROUPE_CANCEL_GRACE_MS ?? 10_000,
    stallTimeoutMs,
    heartbeatMs,
    shutdownGraceMs: env.TROUPE_SHUTDOWN_GRACE_MS ?? 120_000,
    dbRetryMs: env.TROUPE_DB_RETRY_MS ?? 900_000,
    requeueCheckMs: env.TROUPE_REQUEUE_CHECK_MS ?? 2_000,
    requeueSweepMs: env.TROUPE_REQUEUE_SWEEP_MS ?? 60_000,
    presenceMs: env.TROUPE_PRESENCE_MS ?? 10_000,
    capabilitiesMs: env.TROUPE_CAPABILITIES_MS ?? 300_000,
  };
}
