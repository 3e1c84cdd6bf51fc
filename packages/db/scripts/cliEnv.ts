/** Shared bits of the db package's command-line scripts. */

export function requireDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url.trim() === "") {
    throw new Error("DATABASE_URL is not set (expected e.g. postgresql://postgres@127.0.0.1:5432/troupe)");
  }
  return url.trim();
}

/**
 * Runs a script's main and exits explicitly: pg pools or the wasm engine can keep the event loop
 * alive after the work is done, and a migration step must never hang a deploy.
 */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
