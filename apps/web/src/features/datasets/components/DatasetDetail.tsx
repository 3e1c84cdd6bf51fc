"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { formatBytes } from "../../../lib/format";
import { errorMessage, fieldIssuesOf } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { NumberField } from "../../designer/components/fields";
import { own } from "../../../lib/own";
import { refetchAfterWrite } from "../../../trpc/refetch";

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}


/** One dataset: where it comes from, columns with types, the first rows, the eval split, its RunSpec entry. */
export function DatasetDetail({ id, onDeleted }: { id: string; onDeleted: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const dataset = useQuery(trpc.dataset.get.queryOptions({ id }));
  const preview = useQuery(trpc.dataset.preview.queryOptions({ id, limit: 10 }));
  const [evalFraction, setEvalFraction] = useState<unknown>(undefined);
  const [confirm, setConfirm] = useState(false);
  const refresh = () => refetchAfterWrite(queryClient, { queryKey: trpc.dataset.pathKey() });
  const update = useMutation(trpc.dataset.update.mutationOptions({ onSuccess: async () => { setEvalFraction(undefined); await refresh(); } }));
  const remove = useMutation(trpc.dataset.delete.mutationOptions({ onSuccess: async () => { await refresh(); onDeleted(); } }));

  if (dataset.isLoading) return <p className="muted">Loading…</p>;
  if (!dataset.data) return <p className="form-error">{dataset.error ? errorMessage(dataset.error) : "not found"}</p>;
  const d = dataset.data;
  const where =
    d.kind === "upload"
      ? `Uploaded ${d.format.toUpperCase()}, ${formatBytes(d.byteSize)}, ${d.rowCount} rows`
      : d.kind === "huggingface"
        ? `Hugging Face: ${String(d.location?.id)}${d.location?.config ? ` (${String(d.location.config)})` : ""}, split ${String(d.location?.split)}`
        : `Runner host file: ${String(d.location?.path)} (${d.format})`;
  const evalError = fieldIssuesOf(update.error).find((i) => i.path === "evalFraction")?.message;
  const rows = preview.data?.rows ?? [];

  return (
    <div className="part-form" aria-label={`Dataset ${d.name}`}>
      <div className="section-head">
        <h2 style={{ margin: 0 }} data-testid="dataset-title">{d.name}</h2>
        <span className="muted small">{where}</span>
      </div>

      <fieldset>
        <legend>Train / eval split</legend>
        <div className="form-grid">
          <NumberField
            label="Eval fraction"
            hint={`Rows held out for evaluation, fixed by the run's seed. Now ${d.evalFraction}${d.rowCount ? ` (≈${Math.round(d.rowCount * d.evalFraction)} of ${d.rowCount} rows)` : ""}.`}
            value={evalFraction ?? d.evalFraction}
            onChange={setEvalFraction}
            error={evalError}
            testId="dataset-detail-eval"
          />
        </div>
        <div className="form-actions">
          <button
            type="button"
            disabled={evalFraction === undefined || evalFraction === d.evalFraction || update.isPending}
            onClick={() => update.mutate({ id, evalFraction: evalFraction as number })}
          >
            Save split
          </button>
        </div>
      </fieldset>

      <fieldset>
        <legend>Columns</legend>
        {d.columns.length === 0 ? (
          <p className="muted small">{preview.data?.unavailable ?? "No columns known."}</p>
        ) : (
          <ul className="arg-list" style={{ flexDirection: "row", flexWrap: "wrap", listStyle: "none", padding: 0, margin: 0, gap: "0.5rem 1rem" }} data-testid="dataset-columns">
            {d.columns.map((c) => (
              <li key={c}>
                <code>{c}</code>
                <span className="type-chip">{own(d.columnTypes, c) ?? "?"}</span>
              </li>
            ))}
          </ul>
        )}
      </fieldset>

      {rows.length > 0 ? (
        <fieldset>
          <legend>First {rows.length} rows</legend>
          <div className="data-preview">
            <table className="table" data-testid="dataset-preview">
              <thead>
                <tr>
                  <th>#</th>
                  {d.columns.map((c) => (
                    <th key={c}>
                      {c}
                      <span className="type-chip">{own(d.columnTypes, c)}</span>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.map((row, i) => (
                  <tr key={i}>
                    <td className="num">{i + 1}</td>
                    {d.columns.map((c) => (
                      <td key={c}>{cell(own(row, c))}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </fieldset>
      ) : null}

      <details>
        <summary className="small">RunSpec entry (what an experiment puts in <code>datasets</code>)</summary>
        <pre className="panel">{JSON.stringify(d.spec, null, 2)}</pre>
      </details>

      <div className="form-actions">
        {confirm ? (
          <>
            <span className="small">Delete {d.name}? Runs launched with it keep working only while it exists.</span>
            <button type="button" className="danger" onClick={() => remove.mutate({ id })}>
              Delete
            </button>
            <button type="button" className="secondary" onClick={() => setConfirm(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" className="danger" onClick={() => setConfirm(true)}>
            Delete…
          </button>
        )}
        {remove.error ? <span className="field-error">{errorMessage(remove.error)}</span> : null}
      </div>
    </div>
  );
}
