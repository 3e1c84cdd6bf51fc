"use client";

import { useState, type ReactNode } from "react";

/**
 * A windowed list of fixed-height rows: only the rows in view (plus `overscan`) are in the DOM, so
 * 100k transcripts scroll like 20. Calls `onNearEnd` when the last rows come into view (load the next page).
 */
export function VirtualList<T>(props: {
  items: readonly T[];
  rowHeight: number;
  height: number;
  overscan?: number;
  renderRow: (item: T, index: number) => ReactNode;
  rowKey: (item: T) => string | number;
  onNearEnd?: () => void;
  testId?: string;
}) {
  const { items, rowHeight, height } = props;
  const overscan = props.overscan ?? 8;
  const [scrollTop, setScrollTop] = useState(0);
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(items.length, Math.ceil((scrollTop + height) / rowHeight) + overscan);
  return (
    <div
      className="vlist"
      style={{ height }}
      data-testid={props.testId}
      data-rows={items.length}
      onScroll={(e) => {
        const top = e.currentTarget.scrollTop;
        setScrollTop(top);
        if (props.onNearEnd && top + height >= items.length * rowHeight - rowHeight * 10) props.onNearEnd();
      }}
    >
      <div style={{ height: items.length * rowHeight, position: "relative" }}>
        {items.slice(first, last).map((item, i) => (
          <div key={props.rowKey(item)} style={{ position: "absolute", top: (first + i) * rowHeight, height: rowHeight, left: 0, right: 0 }}>
            {props.renderRow(item, first + i)}
          </div>
        ))}
      </div>
    </div>
  );
}
