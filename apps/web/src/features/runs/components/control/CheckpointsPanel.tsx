"use client";

import { useQuery } from "@tanstack/react-query";
import { formatBytes, formatDateTime } from "../../../../lib/format";
import { errorMessage } from "../../../../trpc/errors";
import { useTRPC } from "../../../../trpc/react";

/**
 * The run's checkpoints from its `checkpoint` events: one row per actor and step, newest first.
 * The path is where the runner's host keeps it (weights or LoRA adapter plus optimizer state).
 * One the runtime deleted to honour `trainer.keepCheckpoints` (its `checkpoint_pruned` event) stays
 * listed, greyed and marked, so the history is whole but nobody mistakes it for one to resume from.
 */
export function CheckpointsPanel({ runId, live }: { runId: string; live: boolean }) {
  const trpc = useTRPC();
  const query = useQuery({ ...trpc.run.checkpoints.queryOptions({ runId }), refetchInterval: live ? 5000 : false });
  if (query.isPending) return <p className="muted">Loading checkpoints…</p>;
  if (query.isError) return <div className="form-error">Could not load checkpoints: {errorMessage(query.error)}</div>;
  const rows = [...query.data.checkpoints].reverse();
  if (rows.length === 0) {
    return (
      <div className="panel empty" data-testid="checkpoints-empty">
        No checkpoints yet. Set <code>trainer.checkpointEvery</code> in the spec, or use <b>Stop after this step</b>, which writes one.
      </div>
    );
  }
  return (
    <table className="table" data-testid="checkpoints-table">
      <thead>
        <tr>
          <th>step</th>
          <th>time</th>
          <th>actor</th>
          <th>size</th>
          <th>path</th>
          <th>state</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((c) => (
          <tr
            key={`${c.step}-${c.actor ?? ""}-${c.ts.getTime()}`}
            data-testid="checkpoint-row"
            data-pruned={c.pruned ? "true" : undefined}
            className={c.pruned ? "muted" : undefined}
          >
            <td>{c.step}</td>
            <td>{formatDateTime(c.ts)}</td>
            <td>{c.actor ?? "—"}</td>
            <td>{formatBytes(c.sizeBytes)}</td>
            <td>
              {c.pruned ? <s>{c.path}</s> : <code>{c.path}</code>}
            </td>
            <td data-testid="checkpoint-state">
              {c.pruned ? (
                <span title={`Deleted ${formatDateTime(c.pruned.ts)} to keep only the newest ${c.pruned.keepCheckpoints}`}>
                  deleted by keepCheckpoints={c.pruned.keepCheckpoints}
                </span>
              ) : (
                "kept"
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
