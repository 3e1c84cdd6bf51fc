"use client";

import { useCallback, useState, type ReactNode } from "react";

/**
 * A titled chart wrapper. `data-points` carries how many points are drawn, so a browser test can
 * watch a chart grow without reading SVG.
 */
export function ChartFrame(props: {
  testId: string;
  title: string;
  points: number;
  note?: string;
  /** Several lines: each one's newest value, with its colour, in the header. */
  latest?: { label: string; colour: string; step: number; text: string }[];
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
        {props.latest && props.latest.length > 0 && (
          <span className="chart-latest small" data-testid="chart-latest">
            {props.latest.map((l) => (
              <span key={l.label} title={`${l.label} at step ${l.step}`}>
                <i style={{ background: l.colour }} /> {l.label} <b>{l.text}</b>
              </span>
            ))}
          </span>
        )}
      </h2>
      {props.points === 0 ? <div className="chart-empty">{props.emptyText}</div> : props.children}
    </section>
  );
}

/** Which colour is which line, under a chart; with `onToggle`, a click hides or shows a line (as in W&B). */
export function ChartLegend(props: {
  items: { key: string; label: string; colour: string; dashed?: boolean }[];
  hidden?: ReadonlySet<string>;
  onToggle?: (key: string) => void;
}) {
  const { onToggle } = props;
  return (
    <div className="legend small">
      {props.items.map((item) => {
        const swatch = item.dashed ? <i className="dashed" style={{ borderColor: item.colour }} /> : <i style={{ background: item.colour }} />;
        if (!onToggle) {
          return (
            <span key={item.key}>
              {swatch} {item.label}
            </span>
          );
        }
        const off = props.hidden?.has(item.key) ?? false;
        return (
          <button
            key={item.key}
            type="button"
            className={off ? "legend-item off" : "legend-item"}
            aria-pressed={!off}
            title={off ? "Show this line" : "Hide this line"}
            onClick={() => onToggle(item.key)}
            data-testid="legend-item"
          >
            {swatch} {item.label}
          </button>
        );
      })}
    </div>
  );
}

/** The keys of a chart's hidden lines, and the toggle its legend calls. */
export function useHiddenLines(): [ReadonlySet<string>, (key: string) => void] {
  const [hidden, setHidden] = useState<ReadonlySet<string>>(() => new Set());
  const toggle = useCallback((key: string) => {
    setHidden((current) => {
      const next = new Set(current);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  }, []);
  return [hidden, toggle];
}

export const SERIES_COLOURS = ["#2456c7", "#c2410c", "#15803d", "#7e22ce", "#0e7490", "#b91c1c"];
export const CHART_HEIGHT = 260;
