"use client";

import { useState } from "react";
import type { ReactElement } from "react";
import { Area, CartesianGrid, ComposedChart, Line, ReferenceArea, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatDuration, formatMetric } from "../../../../lib/format";
import { emaDebiased } from "../../lib/ema";
import type { MetricChartSeries } from "../../hooks/useRunCharts";
import { plainTicks } from "./axisTick";
import { CHART_HEIGHT, ChartFrame } from "./ChartFrame";

export interface ChartView {
  x: "step" | "time";
  log: boolean;
  /** EMA weight in [0, 1): 0 draws the raw line only. */
  smoothing: number;
}

export interface DrawnSeries extends MetricChartSeries {
  colour: string;
  /** Dashed line (e.g. a second actor in a comparison). */
  dashed?: boolean;
}

/** Axis ticks with 3 significant digits, so close values (0.0025, 0.005) stay apart. */
const tick = (v: number) =>
  v === 0 ? "0" : Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5 ? v.toExponential(1) : String(Number(v.toPrecision(3)));

type Row = Record<string, number | [number, number] | undefined> & { x: number; step: number };

/**
 * One metric, one line per series (actor or run): the smoothed line over the raw one drawn faint,
 * the min–max band of bucketed points (so a spike inside a bucket stays visible) and a ± std band when
 * given. Drag across the plot to zoom into a step range (the page refetches it at full resolution).
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
}) {
  const { series, view } = props;
  const [drag, setDrag] = useState<{ a: number; b: number } | null>(null);
  const time = view.x === "time" && props.t0 !== null;
  const xOf = (p: { step: number; ts?: number }) => (time ? ((p.ts ?? props.t0!) - props.t0!) / 1000 : p.step);
  const positive = (v: number) => (view.log ? (v > 0 ? v : undefined) : v);

  const rows = new Map<number, Row>();
  const hasBand = series.map(() => false);
  const hasRange = series.map(() => false);
  series.forEach((s, i) => {
    const smooth = view.smoothing > 0 ? emaDebiased(s.points.map((p) => p.value), view.smoothing) : null;
    const std = new Map((s.band ?? []).map((p) => [p.step, p.value]));
    s.points.forEach((p, j) => {
      const x = xOf(p);
      const row = rows.get(x) ?? ({ x, step: p.step } as Row);
      row[`v${i}`] = positive(p.value);
      if (smooth) row[`s${i}`] = positive(smooth[j]!);
      if (p.min !== p.max && !view.log) {
        row[`r${i}`] = [p.min, p.max];
        hasRange[i] = true;
      }
      const sd = std.get(p.step);
      if (sd !== undefined && !view.log) {
        row[`b${i}`] = [p.value - sd, p.value + sd];
        hasBand[i] = true;
      }
      rows.set(x, row);
    });
  });
  const data = [...rows.values()].sort((a, b) => a.x - b.x);
  const drawn = series.reduce((n, s) => n + s.points.length, 0);
  const first = series[0]?.points.at(-1);
  const stepAt = (x: number) => {
    let best = data[0];
    for (const r of data) if (Math.abs(r.x - x) < Math.abs((best?.x ?? Infinity) - x)) best = r;
    return best?.step;
  };
  const labelX = (v: number) => (time ? formatDuration(v * 1000) : String(v));
  const finishDrag = () => {
    if (drag && props.onZoom && drag.a !== drag.b) {
      const a = stepAt(Math.min(drag.a, drag.b));
      const b = stepAt(Math.max(drag.a, drag.b));
      if (a !== undefined && b !== undefined && b > a) props.onZoom(a, b);
    }
    setDrag(null);
  };

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
        <ComposedChart
          width={props.width ?? undefined}
          height={CHART_HEIGHT}
          data={data}
          margin={{ top: 8, right: 16, bottom: 4, left: 0 }}
          onMouseDown={(s) => s.activeLabel !== undefined && setDrag({ a: Number(s.activeLabel), b: Number(s.activeLabel) })}
          onMouseMove={(s) => drag && s.activeLabel !== undefined && setDrag({ ...drag, b: Number(s.activeLabel) })}
          onMouseUp={finishDrag}
          onMouseLeave={() => setDrag(null)}
          style={{ userSelect: "none", cursor: props.onZoom ? "crosshair" : undefined }}
        >
          <CartesianGrid strokeDasharray="3 3" stroke="#e3e6ea" />
          <XAxis dataKey="x" type="number" domain={["dataMin", "dataMax"]} allowDecimals={false} {...plainTicks} tickFormatter={labelX} />
          <YAxis
            {...plainTicks}
            width={56}
            scale={view.log ? "log" : "auto"}
            domain={view.log ? ["auto", "auto"] : ["auto", "auto"]}
            allowDataOverflow={view.log}
            tickFormatter={tick}
          />
          <Tooltip
            formatter={(value, key) =>
              Array.isArray(value)
                ? [value.map((v) => formatMetric(Number(v))).join(" … "), String(key).startsWith("b") ? "± std" : "min … max"]
                : formatMetric(Number(value))
            }
            labelFormatter={(x) => (time ? `t+${labelX(Number(x))}` : `step ${String(x)}`)}
          />
          {series.map((s, i) => [
            // Bands only where there is one: every graphical item walks all rows on each render.
            hasBand[i] ? (
              <Area key={`b${i}`} dataKey={`b${i}`} name={`${s.label} ± std`} stroke="none" fill={s.colour} fillOpacity={0.12} isAnimationActive={false} connectNulls legendType="none" />
            ) : null,
            hasRange[i] ? (
              <Area key={`r${i}`} dataKey={`r${i}`} name={`${s.label} range`} stroke="none" fill={s.colour} fillOpacity={0.22} isAnimationActive={false} connectNulls legendType="none" />
            ) : null,
            <Line
              key={`v${i}`}
              dataKey={`v${i}`}
              name={view.smoothing > 0 ? `${s.label} (raw)` : s.label}
              stroke={s.colour}
              strokeOpacity={view.smoothing > 0 ? 0.25 : 1}
              strokeWidth={view.smoothing > 0 ? 1 : 1.75}
              strokeDasharray={s.dashed ? "5 3" : undefined}
              dot={s.points.length < 3 ? { r: 2.5 } : false}
              isAnimationActive={false}
              connectNulls
            />,
            view.smoothing > 0 ? (
              <Line key={`s${i}`} dataKey={`s${i}`} name={s.label} stroke={s.colour} strokeWidth={2} strokeDasharray={s.dashed ? "5 3" : undefined} dot={false} isAnimationActive={false} connectNulls />
            ) : null,
          ])}
          {drag && drag.a !== drag.b && <ReferenceArea x1={Math.min(drag.a, drag.b)} x2={Math.max(drag.a, drag.b)} fill="#2456c7" fillOpacity={0.12} />}
        </ComposedChart>
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

/** A chart at a known width as it is; one without a width inside a container that measures it. */
function Sized({ width, children }: { width: number | null | undefined; children: ReactElement }) {
  if (width === undefined) return <ResponsiveContainer width="100%" height={CHART_HEIGHT}>{children}</ResponsiveContainer>;
  // Not measured yet (the server render and the first browser render): keep the chart's place.
  if (width === null) return <div style={{ height: CHART_HEIGHT }} />;
  return children;
}
