"use client";

import { useState } from "react";
import { diffSpecs } from "../lib/specDiff";

const show = (v: unknown) => (v === undefined ? "—" : JSON.stringify(v));

/** The runs' frozen specs, leaf by leaf; "differences only" (on by default) hides the rows that agree. */
export function SpecDiffTable({ runs }: { runs: { id: string; name: string; colour: string; spec: unknown }[] }) {
  const [onlyDiff, setOnlyDiff] = useState(true);
  const rows = diffSpecs(runs.map((r) => r.spec));
  const shown = onlyDiff ? rows.filter((r) => r.differs) : rows;
  return (
    <section className="panel" style={{ margin: "1rem 0" }} data-testid="spec-diff">
      <div className="section-head">
        <h2 style={{ margin: 0 }}>Spec</h2>
        <label className="small">
          <input type="checkbox" checked={onlyDiff} onChange={(e) => setOnlyDiff(e.target.checked)} data-testid="spec-diff-only" /> differences only (
          {rows.filter((r) => r.differs).length} of {rows.length})
        </label>
      </div>
      {shown.length === 0 ? (
        <p className="muted">The specs are identical.</p>
      ) : (
        <div style={{ overflowX: "auto" }}>
          <table className="table diff-table">
            <thead>
              <tr>
                <th>field</th>
                {runs.map((r) => (
                  <th key={r.id}>
                    <span className="run-swatch" style={{ background: r.colour }} />
                    {r.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => (
                <tr key={row.path} className={row.differs ? "differs" : undefined} data-testid="spec-diff-row" data-path={row.path}>
                  <td>{row.path}</td>
                  {row.values.map((v, i) => (
                    <td key={runs[i]!.id}>{show(v)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
