import { EnvError, loadRunnerEnv, type RunnerEnv } from "./env";
import { startRunner } from "./runner";

/** Entry point: `npm run -w @troupe/runner start`. */
let env: RunnerEnv;
try {
  env = loadRunnerEnv();
} catch (error) {
  if (error instanceof EnvError) {
    console.error(`troupe runner: invalid environment: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

const runner = await startRunner(env).catch((error: unknown) => {
  // Postgres or Redis unreachable, database not migrated…: say so in one line and exit non-zero.
  console.error(`troupe runner: could not start: ${(error as Error).message}`);
  process.exit(1);
});

/**
 * SIGTERM / SIGINT: the first one stops every run after its current step with a checkpoint and
 * requeues it for the next runner (cancelled after TROUPE_SHUTDOWN_GRACE_MS), then exits 0. A second
 * one cancels the runs now (their runtimes get SIGTERM, SIGKILL after TROUPE_CANCEL_GRACE_MS) and
 * still waits for their last events to be stored. A third exits at once. A signal within 1 s of the
 * previous one counts as the same (Ctrl-C reaches both a parent script and the runner).
 */
let signals = 0;
let lastSignalAt = 0;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    const now = Date.now();
    if (signals > 0 && now - lastSignalAt < 1_000) return;
    lastSignalAt = now;
    signals += 1;
    if (signals === 2) {
      runner.cancelRuns(`second ${signal}`);
      return;
    }
    if (signals > 2) {
      console.error(`troupe runner: third ${signal}, exiting now (runtimes are left to their SIGTERM)`);
      process.exit(1);
    }
    runner
      .shutdown(signal)
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        console.error(`troupe runner: shutdown failed: ${(error as Error).stack ?? String(error)}`);
        process.exit(1);
      });
  });
}
