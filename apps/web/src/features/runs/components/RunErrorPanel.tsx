import { namedFieldPaths } from "../lib/namedFieldPaths";
import type { RunDetail } from "../server/schemas";

const TAIL_LINES = 15;

/** Why a run failed, with the last lines of its log. Text only: nothing here is interpreted as HTML. */
export function RunErrorPanel({ run, fallbackLog }: { run: RunDetail; fallbackLog: string | null }) {
  // The last lines matter most; the full log is in the log panel below.
  const tail = (run.logTail ?? fallbackLog)?.split("\n").slice(-TAIL_LINES).join("\n");
  return (
    <section className="panel error-panel" data-testid="run-error" role="alert">
      <h2>Run failed</h2>
      <pre>{run.error ? namedFieldPaths(run.error, run.spec) : "The run failed without an error message."}</pre>
      {tail && (
        <>
          <h3>Last log lines</h3>
          <pre className="log log-tail">{tail}</pre>
        </>
      )}
    </section>
  );
}
