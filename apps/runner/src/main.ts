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

let signals = 0;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    signals += 1;
    if (signals > 1) {
      console.error(`troupe runner: second ${signal}, exiting now (runtimes are left to their SIGTERM)`);
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
