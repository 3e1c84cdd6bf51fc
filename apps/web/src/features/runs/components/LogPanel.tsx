"use client";

import { useEffect, useRef } from "react";
import { terminalLine } from "../lib/terminalLine";

/**
 * Python logs to stderr by default, so the stream says little about severity: colour by what the line says.
 */
function lineClass(text: string): string | undefined {
  if (/\b(error|exception|traceback|fatal|critical)\b/i.test(text)) return "log-error";
  if (/\bwarn(ing)?\b/i.test(text)) return "log-warn";
  return undefined;
}

/** The tail of the run's stdout/stderr, kept scrolled to the bottom while it grows. */
export function LogPanel({
  lines,
  loading,
}: {
  lines: { lineNo: number; stream: string; text: string }[];
  loading: boolean;
}) {
  const ref = useRef<HTMLPreElement>(null);
  const lastLine = lines.at(-1)?.lineNo;
  useEffect(() => {
    const el = ref.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [lastLine]);
  return (
    <section className="panel">
      <h2>Log</h2>
      <pre className="log" ref={ref} data-testid="run-log-tail">
        {lines.length === 0
          ? loading
            ? "Loading…"
            : "No output yet."
          : lines.map((l) => (
              <span key={l.lineNo} className={lineClass(l.text)} title={l.stream}>
                {terminalLine(l.text)}
                {"\n"}
              </span>
            ))}
      </pre>
    </section>
  );
}
