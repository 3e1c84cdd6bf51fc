"use client";

import { orderRunSpec, RunSpec } from "@troupe/contracts";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage, fieldIssuesOf } from "../../../../trpc/errors";
import { useTRPC } from "../../../../trpc/react";
import { downloadSpec, specFileName, specText, type SpecFormat } from "../../../../lib/specText";
import type { Draft } from "../../lib/draftPath";

type Format = SpecFormat;

/**
 * A valid draft exports as the parsed RunSpec (keys in schema order, defaults filled: nothing the run
 * will do is hidden); an invalid one as drafted, its keys in schema order at every level (`orderRunSpec`,
 * the same order every stored spec is read back in).
 */
function exportable(draft: Draft): { spec: unknown; full: boolean } {
  const parsed = RunSpec.safeParse(draft);
  if (parsed.success) return { spec: parsed.data, full: true };
  return { spec: orderRunSpec(draft), full: false };
}

/**
 * Export the draft as YAML or JSON (what `npx troupe run` and POST /api/v1/runs accept), or import
 * one: parsed on the server by the REST API's parser, so errors carry the same line and column.
 */
export function SpecTextPanel(props: { draft: Draft; onImport(spec: Draft): void }) {
  const trpc = useTRPC();
  const [mode, setMode] = useState<"closed" | "export" | "import">("closed");
  const [format, setFormat] = useState<Format>("yaml");
  const [text, setText] = useState("");
  const importer = useMutation(trpc.experiment.importSpec.mutationOptions());
  const exported = exportable(props.draft);
  const exportedText = specText(exported.spec, format);

  return (
    <section className="panel spec-text" aria-label="Spec as text">
      <div className="form-actions">
        <button type="button" className="secondary" onClick={() => setMode(mode === "export" ? "closed" : "export")} data-testid="spec-export-open">
          Export…
        </button>
        <button type="button" className="secondary" onClick={() => setMode(mode === "import" ? "closed" : "import")} data-testid="spec-import-open">
          Import…
        </button>
        {mode !== "closed" && (
          <select aria-label="Format" value={format} onChange={(e) => setFormat(e.target.value as Format)}>
            <option value="yaml">YAML</option>
            <option value="json">JSON</option>
          </select>
        )}
      </div>
      {mode === "export" && (
        <>
          <p className="hint muted small">
            {exported.full
              ? "Every default filled in: exactly what a launch freezes on the run."
              : "As drafted (not valid yet, so defaults are not filled in)."}
          </p>
          <textarea readOnly rows={14} value={exportedText} aria-label="Exported spec" className="mono" data-testid="spec-export-text" />
          <div className="form-actions">
            <button
              type="button"
              onClick={() => downloadSpec(specFileName(props.draft.name, format, "experiment"), exportedText, format)}
            >
              Download
            </button>
            <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(exportedText)}>
              Copy
            </button>
          </div>
        </>
      )}
      {mode === "import" && (
        <>
          <input
            type="file"
            accept=".yaml,.yml,.json,application/json,application/yaml"
            aria-label="Spec file"
            onChange={async (e) => {
              const file = e.target.files?.[0];
              if (!file) return;
              setText(await file.text());
              setFormat(/\.json$/i.test(file.name) ? "json" : "yaml");
            }}
          />
          <textarea rows={10} value={text} onChange={(e) => setText(e.target.value)} aria-label="Spec to import" className="mono" data-testid="spec-import-text" />
          <button
            type="button"
            disabled={importer.isPending || text.trim() === ""}
            data-testid="spec-import-submit"
            onClick={() =>
              importer.mutate(
                { text, format },
                {
                  onSuccess: (out) => {
                    props.onImport(out.spec);
                    if (out.issues.length === 0) setMode("closed");
                  },
                },
              )
            }
          >
            Replace the draft with this spec
          </button>
          {importer.error && (
            <ul className="form-error" role="alert" data-testid="spec-import-error">
              {(fieldIssuesOf(importer.error).length ? fieldIssuesOf(importer.error) : [{ path: "", message: errorMessage(importer.error) }]).map((i, k) => (
                <li key={k}>{i.message}</li>
              ))}
            </ul>
          )}
          {importer.data && importer.data.issues.length > 0 && (
            <ul className="draft-note" data-testid="spec-import-issues">
              <li>Imported into the draft with these problems (fix them below):</li>
              {importer.data.issues.map((i, k) => (
                <li key={k}>
                  {i.line ? `line ${i.line}, column ${i.column}: ` : ""}
                  <code>{i.path}</code> {i.message}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
