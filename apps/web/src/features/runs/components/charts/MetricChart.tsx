"use client";

import { useMemo, useRef } from "react";
import type { ReactNode } from "react";
import { formatDuration, formatMetric } from "../../../../lib/format";
import { useElementWidth } from "../../hooks/useElementWidth";
import type { MetricChartSeries } from "../../hooks/useRunCharts";
import { metricPlot, nearestStep, stepLabel, tickLabel, type ChartView, type DrawnSeries } from "../../lib/metricPlot";
import { CanvasPlot } from "./CanvasPlot";
import { CHART_HEIGHT, ChartFrame } from "./ChartFrame";

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
  /** The chart's width in pixels when the page knows it (one measurement for a grid of charts);
   *  otherwise it measures itself. */
  width?: number | null;
  /** Charts with the same key share the hover cursor. */
  syncKey?: string;
}) {
  const { series, view, t0 } = props;
  const plot = useMemo(() => metricPlot(series, view, t0), [series, view, t0]);
  const drawn = series.reduce((n, s) => n + s.points.length, 0);
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
      note={first ? `step ${first.step}: ${formatMetric(first.value)}` : undefined}
      emptyText="Nothing reported yet"
      zoom={props.zoom ?? null}
    >
      <Sized width={props.width}>
        {(width) => (
          <CanvasPlot
            width={width}
            height={CHART_HEIGHT}
            data={plot.data}
            series={plot.series}
            bands={plot.bands}
            logY={view.log}
            integerX={!time}
            formatX={time ? (v) => formatDuration(v * 1000) : stepLabel}
            formatY={tickLabel}
            tooltip={plot.tooltip}
            onSelectX={select}
            syncKey={props.syncKey}
          />
        )}
      </Sized>
      {series.length > 1 && (
        <div className="legend small">
          {series.map((s) => (
            <span key={s.label}>
              <i style={{ background: s.colour }} /> {s.label}
            </span>
          ))}
        </div>
      )}
    </ChartFrame>
  );
}

/**
 * A chart at the width it is given; one without a width measures its place. Not measured yet (the
 * server render and the first browser render): the chart's place is kept.
 */
export function Sized({ width, children }: { width: number | null | undefined; children: (width: number) => ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const measured = useElementWidth(ref, 1);
  if (width !== undefined) return width === null ? <div style={{ height: CHART_HEIGHT }} /> : children(width);
  return <div ref={ref}>{measured === null ? <div style={{ height: CHART_HEIGHT }} /> : children(measured)}</div>;
}
