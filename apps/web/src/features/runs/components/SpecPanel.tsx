"use client";

import { useState } from "react";
import { downloadSpec, specFileName, specText, type SpecFormat } from "../../../lib/specText";

/**
 * The frozen RunSpec as YAML or JSON, ready to copy or download: the file `npx troupe run` and
 * POST /api/v1/runs take to run it again.
 */
export function SpecPanel({ spec, open = false }: { spec: unknown; open?: boolean }) {
  const [format, setFormat] = useState<SpecFormat>("yaml");
  const [copied, setCopied] = useState(false);
  const text = specText(spec, format);
  const name = typeof spec === "object" && spec !== null ? (spec as { name?: unknown }).name : undefined;
  const copy = () =>
    void navigator.clipboard?.writeText(text).then(() => {
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    });

  return (
    <section className="panel">
      <details open={open}>
        <summary>Run spec (frozen at launch, every default filled in)</summary>
        <div className="toolbar spec-toolbar">
          <select aria-label="Format" value={format} onChange={(e) => setFormat(e.target.value as SpecFormat)} data-testid="run-spec-format">
            <option value="yaml">YAML</option>
            <option value="json">JSON</option>
          </select>
          <button type="button" className="secondary" onClick={copy}>
            {copied ? "Copied" : "Copy"}
          </button>
          <button type="button" className="secondary" onClick={() => downloadSpec(specFileName(name, format, "run"), text, format)}>
            Download
          </button>
          <span className="muted small">
            Run it again with <code>npx troupe run {specFileName(name, format, "run")}</code> or POST it to <code>/api/v1/runs</code>.
          </span>
        </div>
        <pre className="spec" data-testid="run-spec">
          {text}
        </pre>
      </details>
    </section>
  );
}
