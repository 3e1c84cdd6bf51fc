"use client";

import type { ReactNode } from "react";

export interface PartsListItem {
  id: string;
  name: string;
  sub?: string;
}

/**
 * The left column of a parts page: every saved part of one kind, the selected one marked, and a
 * "New" button. Plain buttons in a list, so Tab and Enter are all it takes.
 */
export function PartsList({
  title,
  items,
  selectedId,
  onSelect,
  onNew,
  newLabel,
  loading,
  empty,
  testId,
}: {
  title: string;
  items: PartsListItem[];
  selectedId: string | null;
  onSelect: (id: string) => void;
  onNew: () => void;
  newLabel: string;
  loading?: boolean;
  empty?: ReactNode;
  testId?: string;
}) {
  return (
    <aside className="parts-list panel" aria-label={title} data-testid={testId}>
      <div className="section-head" style={{ marginBottom: "0.25rem" }}>
        <h2 style={{ margin: 0 }}>{title}</h2>
        <button type="button" onClick={onNew} aria-current={selectedId === null ? "true" : undefined}>
          {newLabel}
        </button>
      </div>
      {loading ? <p className="muted small">Loading…</p> : null}
      {!loading && items.length === 0 ? <p className="muted small">{empty ?? "None yet."}</p> : null}
      <ul>
        {items.map((item) => (
          <li key={item.id}>
            <button type="button" onClick={() => onSelect(item.id)} aria-current={item.id === selectedId ? "true" : undefined}>
              {item.name}
              {item.sub ? <span className="part-sub">{item.sub}</span> : null}
            </button>
          </li>
        ))}
      </ul>
    </aside>
  );
}
