/**
 * The runner's console output: one line per event worth knowing, prefixed with time and
 * runner id, so `grep run=<id>` follows one run through the runner's log.
 */
export interface RunnerLog {
  /** One line per run state change (queued → running, running → failed…). */
  runState(runId: string, from: string, to: string, detail?: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function consoleLog(runnerId: string): RunnerLog {
  const line = (level: string, text: string) => `${new Date().toISOString()} ${level} runner=${runnerId} ${text}`;
  return {
    runState: (runId, from, to, detail) =>
      console.log(line("INFO", `run=${runId} ${from} → ${to}${detail ? ` (${oneLine(detail)})` : ""}`)),
    info: (m) => console.log(line("INFO", m)),
    warn: (m) => console.warn(line("WARN", m)),
    error: (m) => console.error(line("ERROR", m)),
  };
}

/** A log that keeps its lines in memory (tests read them; nothing is printed). */
export function memoryLog(): RunnerLog & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    runState: (runId, from, to, detail) => lines.push(`run=${runId} ${from} → ${to}${detail ? ` (${oneLine(detail)})` : ""}`),
    info: (m) => lines.push(`INFO ${m}`),
    warn: (m) => lines.push(`WARN ${m}`),
    error: (m) => lines.push(`ERROR ${m}`),
  };
}

const oneLine = (text: string) => {
  const first = text.split("\n", 1)[0] ?? "";
  return first.length > 200 ? `${first.slice(0, 200)}…` : first;
};
