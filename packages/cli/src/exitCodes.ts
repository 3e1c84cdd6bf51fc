/** Exit codes, for CI: a step can tell "the model is not good enough" from "the run broke" from "we never got there". */
export const EXIT = {
  /** The run succeeded and every threshold held (or the command did what it was asked). */
  ok: 0,
  /** The run succeeded but a `--fail-below` / `--fail-above` threshold was missed (or the metric was never reported). */
  thresholdMissed: 1,
  /** The run failed or was cancelled (or `--timeout` passed before it ended). */
  runFailed: 2,
  /** Bad usage, unreachable server, rejected token or request (the run may not exist). */
  usage: 3,
  /** The run succeeded (and its thresholds held) but raised a health advisory at or above `--fail-on-advisory`. */
  advisory: 4,
} as const;

/** An error that ends the command with `code` after printing `message` as one line. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: number = EXIT.usage,
    /** Extra lines (e.g. each field at fault), printed indented after the message. */
    readonly details: string[] = [],
  ) {
    super(message);
    this.name = "CliError";
  }
}
