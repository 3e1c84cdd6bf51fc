/**
 * What the runtime's exit codes mean (gpu-runtime/src/troupe/run.py EXIT_*), in words, so a log line or a
 * run's error says "exited with code 4 (stopped on request …)" instead of a bare number a person has to
 * look up. gpu-runtime/tests/test_runtime_exit_codes.py reads this table and holds it to run.py.
 */
export const RUNTIME_EXIT_CODES: Readonly<Record<number, { state: string; words: string }>> = {
  0: { state: "succeeded", words: "succeeded" },
  1: { state: "failed", words: "failed: the error it reported is above" },
  2: { state: "spec", words: "refused the spec before training: the message names the field" },
  3: { state: "cancelled", words: "cancelled on request" },
  4: { state: "stopped", words: "stopped on request after saving a checkpoint; resume continues from it" },
};

/** "exited with code 4 (stopped on request …)"; an unknown code stays a number. */
export function describeRuntimeExitCode(code: number | null): string {
  if (code === null) return "exited";
  const known = RUNTIME_EXIT_CODES[code];
  return known && code !== 0 ? `exited with code ${code} (${known.words})` : `exited with code ${code}`;
}
