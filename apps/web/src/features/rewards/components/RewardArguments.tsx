"use client";

import { own } from "../../../lib/own";

/**
 * What the function will be called with, beside the editor: the named arguments of its scope, then
 * the columns of the chosen dataset (passed as keyword arguments; a named argument wins over a
 * column of the same name).
 */
export function RewardArguments({
  scope,
  columns,
  columnTypes,
  datasetName,
}: {
  scope: "completion" | "conversation";
  columns: string[];
  columnTypes: Record<string, string>;
  datasetName: string | null;
}) {
  const named =
    scope === "completion"
      ? [
          ["prompt", "str", "the prompt the actor saw (the environment's prompt field or template)"],
          ["completion", "str", "the actor's reply being scored"],
        ]
      : [
          ["conversation", "list[dict]", 'every message so far: {"actor", "content"}; the first is the user prompt'],
          ["actor_name", "str", "the actor being scored (called once per trainable actor)"],
        ];
  const shadowed = new Set(named.map(([n]) => n));
  return (
    <aside className="panel arg-list" aria-label="Arguments the function receives" data-testid="reward-arguments">
      <h3 style={{ margin: 0 }}>Arguments</h3>
      <p className="muted small" style={{ margin: 0 }}>
        Called as <code>reward({named.map(([n]) => n).join(", ")}, **row)</code> and must return a number.
      </p>
      {named.map(([name, type, what]) => (
        <div key={name}>
          <code>{name}</code> <span className="type-chip">{type}</span>
          <div className="muted small">{what}</div>
        </div>
      ))}
      <h3 style={{ margin: "0.5rem 0 0" }}>Row columns {datasetName ? <span className="muted small">({datasetName})</span> : null}</h3>
      {columns.length === 0 ? (
        <p className="muted small" style={{ margin: 0 }}>Choose a dataset below to see its columns.</p>
      ) : (
        columns.map((c) => (
          <div key={c}>
            <code>{c}</code> <span className="type-chip">{own(columnTypes, c) ?? "?"}</span>
            {shadowed.has(c) ? <span className="muted small"> (the named argument wins)</span> : null}
          </div>
        ))
      )}
      <p className="muted small" style={{ margin: "0.5rem 0 0" }}>
        Runs out of process with the time and memory limits below. Decorate with <code>@batched</code> to get lists (one entry per call).
      </p>
    </aside>
  );
}
