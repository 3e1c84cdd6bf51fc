import type { SpecStats } from "../stats";
import type { DslError } from "../errors";
import type { Schedule } from "../ast";

/** `1:8 unknown_actor: message`, then the source line with a caret under the span. */
export function renderErrors(errors: readonly DslError[], source: string): string {
  const lines = source.split("\n");
  return errors
    .map((e) => {
      const line = lines[e.line - 1] ?? "";
      const chars = Array.from(line);
      const sameLine = e.span.end.line === e.line;
      const width = Math.max(1, sameLine ? e.span.end.column - e.column : chars.length - e.column + 1);
      const pad = chars.slice(0, e.column - 1).map((c) => (c === "\t" ? "\t" : " ")).join("");
      return `${e.line}:${e.column} error[${e.kind}]: ${e.message}\n  ${line}\n  ${pad}${"^".repeat(width)}`;
    })
    .join("\n");
}

/** One schedule per line: turns joined by " -> ", parallel actors by " & ". */
export function renderSchedule(schedule: Schedule): string {
  return schedule.map((turn) => turn.join(" & ")).join(" -> ");
}

export function renderStats(s: SpecStats): string {
  const rows = Object.entries(s.actors).map(
    ([name, a]) => `  ${name}: ${a.minTurns}..${a.maxTurns} turns, expected ${round(a.expectedTurns)}`,
  );
  return [
    `turns: ${s.minTurns}..${s.maxTurns}, expected ${round(s.expectedTurns)}`,
    `most actors in one turn: ${s.maxActorsPerTurn}`,
    "per actor:",
    ...rows,
  ].join("\n");
}

function round(x: number): string {
  return String(Math.round(x * 1e6) / 1e6);
}
