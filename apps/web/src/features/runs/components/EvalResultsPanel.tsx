"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { formatMetric } from "../../../lib/format";
import { useTRPC } from "../../../trpc/react";
import type { EvalResultRow } from "../lib/evalResults";

/** Reward components of the rows: every `reward/<name>` but the mean and std, in name order. */
function componentsOf(rows: EvalResultRow[]): string[] {
  const names = new Set(rows.flatMap((r) => Object.keys(r.values)).filter((k) => k.startsWith("reward/") && k !== "reward/mean" && k !== "reward/std"));
  return [...names].sort();
}

/**
 * The latest evaluation of each environment and actor (`eval/<environment>/…`), as a table; an eval-only run
 * (`trainer.steps: 0`) has nothing else to show. Read again as live metrics arrive; hidden when nothing was evaluated.
 */
export function EvalResultsPanel({ runId, live, version }: { runId: string; live: boolean; version: number }) {
  const trpc = useTRPC();
  const results = useQuery(trpc.run.evalResults.queryOptions({ runId }));
  const { refetch } = results;
  // Read again when live metrics arrive (`version`) and once when the run ends (its last metrics are stored by then).
  useEffect(() => {
    void refetch();
  }, [refetch, version, live]);
  const data = results.data;
  if (!data) return null;
  if (data.rows.length === 0) {
    return data.evalOnlyRun ? (
      <section className="panel small" data-testid="eval-results" style={{ marginBottom: "1rem" }}>
        <b>Eval-only run</b> (trainer.steps 0): no environment has reported its evaluation yet.
      </section>
    ) : null;
  }
  const components = componentsOf(data.rows);
  return (
    <section className="panel" data-testid="eval-results" style={{ marginBottom: "1rem" }}>
      <h3 className="group-title" style={{ marginTop: 0 }}>
        Eval by environment{data.evalOnlyRun ? " · eval-only run (trainer.steps 0: nothing trained)" : ""}
      </h3>
      <table className="table">
        <thead>
          <tr>
            <th>environment</th>
            <th>actor</th>
            <th>step</th>
            <th>reward (mean ± std)</th>
            {components.map((c) => (
              <th key={c}>{c.slice("reward/".length)}</th>
            ))}
            <th>completion length</th>
            <th>samples</th>
          </tr>
        </thead>
        <tbody>
          {data.rows.map((r) => (
            <tr key={`${r.environment}/${r.actor}`} data-testid={`eval-row-${r.environment}-${r.actor}`}>
              <td>{r.environment}</td>
              <td>{r.actor}</td>
              <td>{r.step}</td>
              <td data-testid="eval-reward">
                {formatMetric(r.values["reward/mean"])}
                {r.values["reward/std"] !== undefined && <span className="muted"> ± {formatMetric(r.values["reward/std"])}</span>}
              </td>
              {components.map((c) => (
                <td key={c}>{formatMetric(r.values[c])}</td>
              ))}
              <td>{formatMetric(r.values["completion_len"])}</td>
              <td data-testid="eval-samples">{r.values["samples"] ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
