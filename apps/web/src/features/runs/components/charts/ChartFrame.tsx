import type { ReactNode } from "react";

/**
 * A titled chart wrapper. `data-points` carries how many points are drawn, so a browser test can
 * watch a chart grow without reading SVG.
 */
export function ChartFrame(props: {
  testId: string;
  title: string;
  points: number;
  note?: string;
  emptyText: string;
  /** The step range shown when zoomed (a browser test reads it). */
  zoom?: { from: number; to: number } | null;
  children: ReactNode;
}) {
  return (
    <section
      className="panel chart"
      data-testid={props.testId}
      data-points={props.points}
      data-zoom={props.zoom ? `${props.zoom.from}-${props.zoom.to}` : undefined}
    >
      <h2>
        <span>{props.title}</span>
        {props.note && <span className="muted small">{props.note}</span>}
      </h2>
      {props.points === 0 ? <div className="chart-empty">{props.emptyText}</div> : props.children}
    </section>
  );
}

/** Which colour is which line, under a chart. */
export function ChartLegend({ items }: { items: { key: string; label: string; colour: string; dashed?: boolean }[] }) {
  return (
    <div className="legend small">
      {items.map((item) => (
        <span key={item.key}>
          {item.dashed ? <i className="dashed" style={{ borderColor: item.colour }} /> : <i style={{ background: item.colour }} />} {item.label}
        </span>
      ))}
    </div>
  );
}

export const SERIES_COLOURS = ["#2456c7", "#c2410c", "#15803d", "#7e22ce", "#0e7490", "#b91c1c"];
export const CHART_HEIGHT = 260;
