"use client";

import { memo, useRef, type ReactNode } from "react";
import { isEloMetric } from "../../ratings/lib/eloRatings";
import type { LiveRunData } from "../../live/liveRunData";
import { useElementWidth } from "../hooks/useElementWidth";
import { metricSeries } from "../hooks/useRunCharts";
import { bandFor, chartTestId, groupMetrics } from "../lib/metricGroups";
import { KlOffChart } from "./charts/KlOffChart";
import { actorColour } from "../lib/specNames";
import type { MetricSeries } from "../server/schemas";
import { PLOT_INSET } from "./charts/CanvasPlot";
import type { ChartView } from "../lib/metricPlot";
import { MetricChart } from "./charts/MetricChart";

const GAP = 16;
const MIN_CHART = 360;
/** Horizontal padding and border of a chart's panel (`.panel`): the chart is this much narrower. */
const CHART_PADDING = Math.ceil(2 * 1.1 * 16 + 2);

/** Width of one chart in the grid, which is also the number of buckets to ask the server for. */
export function chartWidth(gridWidth: number): number {
  const cols = Math.max(1, Math.floor((gridWidth + GAP) / (MIN_CHART + GAP)));
  return Math.floor((gridWidth - (cols - 1) * GAP) / cols);
}

export function ChartToolbar(props: {
  view: ChartView;
  setView: (v: ChartView) => void;
  zoom: { from: number; to: number } | null;
  resetZoom: () => void;
}) {
  const { view, setView } = props;
  return (
    <div className="toolbar" data-testid="chart-toolbar">
      <label>
        x-axis
        <select value={view.x} onChange={(e) => setView({ ...view, x: e.target.value as ChartView["x"] })} data-testid="chart-x">
          <option value="step">step</option>
          <option value="time">time</option>
        </select>
      </label>
      <label>
        <input type="checkbox" checked={view.log} onChange={(e) => setView({ ...view, log: e.target.checked })} data-testid="chart-log" /> log scale
      </label>
      <label title="Scale each chart's y-axis to the 1st–99th percentile of its lines, so a spike does not flatten the rest (linear scale)">
        <input
          type="checkbox"
          checked={view.ignoreOutliers}
          disabled={view.log}
          onChange={(e) => setView({ ...view, ignoreOutliers: e.target.checked })}
          data-testid="chart-outliers"
        />{" "}
        ignore outliers
      </label>
      <label>
        smoothing
        <input
          type="range"
          min={0}
          max={0.99}
          step={0.01}
          value={view.smoothing}
          onChange={(e) => setView({ ...view, smoothing: Number(e.target.value) })}
          data-testid="chart-smoothing"
        />
        <span style={{ width: "2.5rem" }}>{view.smoothing.toFixed(2)}</span>
      </label>
      {props.zoom ? (
        <>
          <span>
            steps {props.zoom.from}–{props.zoom.to}
          </span>
          <button type="button" className="secondary" onClick={props.resetZoom} data-testid="zoom-reset">
            Reset zoom
          </button>
          <span className="muted small">or double-click a chart</span>
        </>
      ) : (
        <span className="muted small">drag across a chart to zoom</span>
      )}
    </div>
  );
}

interface RunChartsProps {
  names: string[];
  history: MetricSeries[] | undefined;
  live: LiveRunData;
  /** `live.metricVersion`: `live` is mutated in place, this number says its metrics changed. */
  version: number;
  actors: string[];
  view: ChartView;
  t0: number | null;
  zoom: { from: number; to: number } | null;
  onZoom: (from: number, to: number) => void;
  onResetZoom: () => void;
  /** The width of a chart's plot area in pixels: how many points per series to ask for. */
  onWidth: (w: number) => void;
  /** Trainable actors whose KL penalty is off (training.klBeta 0): the Policy group says so in a card. */
  klOff?: string[];
  /** Drawn in the Games group after its charts: the Elo per checkpoint (features/ratings), which draws `elo/…` itself. */
  games?: ReactNode;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Every metric the run reports, grouped, one line per actor. Redrawn only when what it draws changes:
 * memory and episode events arrive between metric events and would otherwise redraw every chart,
 * delaying the next live point. (The callbacks only set state, so a stale one does the same thing.)
 */
export const RunCharts = memo(
  RunChartsGrid,
  (a, b) =>
    a.version === b.version &&
    a.history === b.history &&
    a.view === b.view &&
    a.zoom === b.zoom &&
    a.t0 === b.t0 &&
    sameList(a.names, b.names) &&
    sameList(a.actors, b.actors) &&
    sameList(a.klOff ?? [], b.klOff ?? []),
);

function RunChartsGrid(props: RunChartsProps) {
  const gridRef = useRef<HTMLDivElement>(null);
  // Exact, to size the plots; the points asked for follow it only on a large change (chartPointsFor).
  const width = useElementWidth(gridRef, 1);
  const reported = useRef<number | null>(null);
  if (width !== null && reported.current !== width) {
    reported.current = width;
    // One bucket per pixel of the plot area.
    queueMicrotask(() => props.onWidth(chartWidth(width) - CHART_PADDING - PLOT_INSET));
  }
  // Reward and loss charts are always there (empty until the first step), so the page keeps its shape.
  const all = new Set(["reward/mean", "loss", ...props.names]);
  const groups = groupMetrics(all);
  return (
    <div ref={gridRef}>
      {groups.map((g) => (
        <div key={g.title}>
          <h3 className="group-title">{g.title}</h3>
          <div className="charts">
            {g.names.filter((name) => !isEloMetric(name)).map((name) => {
              const band = bandFor(name, all);
              const series = metricSeries(name, props.history, props.live, band, props.zoom !== null);
              return (
                <MetricChart
                  key={name}
                  testId={chartTestId(name)}
                  title={band ? `${name} (± std)` : name}
                  series={series.map((s) => ({ ...s, label: s.actor || name, colour: actorColour(props.actors, s.actor) }))}
                  view={props.view}
                  t0={props.t0}
                  zoom={props.zoom}
                  onZoom={props.onZoom}
                  onResetZoom={props.onResetZoom}
                  width={width === null ? null : chartWidth(width) - CHART_PADDING}
                  syncKey="run-charts"
                />
              );
            })}
            {g.title === "Games" && props.games}
            {g.title === "Policy" && props.klOff && props.klOff.length > 0 && <KlOffChart actors={props.klOff} measured={all.has("kl")} />}
          </div>
        </div>
      ))}
    </div>
  );
}
