"use client";

import { useMemo } from "react";
import { formatDuration, formatMetric } from "../../../../lib/format";
import { metricPlot, nearestStep, stepLabel, tickLabel, type ChartView, type DrawnSeries } from "../../lib/metricPlot";
import { latestValues } from "../../lib/latestValues";
import { ChartFrame, ChartLegend, useHiddenLines } from "./ChartFrame";
import { SizedPlot } from "./SizedPlot";

/**
 * One metric, one line per series (actor or run): the smoothed line over the raw one drawn faint,
 * the min–max band of bucketed points and a ± std band when given. Drag across the plot to zoom into
 * a step range (the page refetches it at full resolution).
 */
export function MetricChart(props: {
  testId: string;
  title: string;
  series: DrawnSeries[];
  view: ChartView;
  /** Run start (ms), for the time axis. */
  t0: number | null;
  onZoom?: (fromStep: number, toStep: number) => void;
  zoom?: { from: number; to: number } | null;
  /** Back to the whole run (a double click on a zoomed chart). */
  onResetZoom?: () => void;
  /** The chart's width in pixels when the page knows it (one measurement for a grid of charts);
   *  otherwise it measures itself. */
  width?: number | null;
  /** Charts with the same key share the hover cursor. */
  syncKey?: string;
}) {
  const { series, view, t0 } = props;
  const [hidden, toggle] = useHiddenLines();
  const shown = useMemo(() => (hidden.size === 0 ? series : series.filter((s) => !hidden.has(s.label))), [series, hidden]);
  const plot = useMemo(() => metricPlot(shown, view, t0), [shown, view, t0]);
  const drawn = shown.reduce((n, s) => n + s.points.length, 0);
  const first = series[0]?.points.at(-1);
  const time = view.x === "time" && t0 !== null;
  const onZoom = props.onZoom;
  const select = onZoom
    ? (from: number, to: number) => {
        const xs = plot.data[0];
        const a = nearestStep(xs, plot.steps, from);
        const b = nearestStep(xs, plot.steps, to);
        if (a !== undefined && b !== undefined && b > a) onZoom(a, b);
      }
    : undefined;

  return (
    <ChartFrame
      testId={props.testId}
      title={props.title}
      points={drawn}
      note={series.length === 1 && first ? `step ${first.step}: ${formatMetric(first.value)}` : undefined}
      latest={series.length > 1 ? latestValues(series) : undefined}
      emptyText="Nothing reported yet"
      zoom={props.zoom ?? null}
    >
      <SizedPlot
        width={props.width}
        data={plot.data}
        series={plot.series}
        bands={plot.bands}
        logY={view.log}
        yRange={plot.yRange}
        integerX={!time}
        formatX={time ? (v) => formatDuration(v * 1000) : stepLabel}
        formatY={tickLabel}
        tooltip={plot.tooltip}
        onSelectX={select}
        onDoubleClick={props.zoom ? props.onResetZoom : undefined}
        syncKey={props.syncKey}
      />
      {series.length > 1 && (
        <ChartLegend items={series.map((s) => ({ key: s.label, label: s.label, colour: s.colour, dashed: s.dashed }))} hidden={hidden} onToggle={toggle} />
      )}
    </ChartFrame>
  );
}
