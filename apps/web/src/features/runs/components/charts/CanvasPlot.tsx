"use client";

import { useEffect, useLayoutEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

/**
 * One line chart drawn on a canvas by uPlot. A run page shows a dozen charts of a few hundred points
 * each, live: as SVG (Recharts) each chart cost ~50 ms of React work per draw; on a canvas a draw
 * is a few paths, well under a millisecond per chart, and a live point is `setData`, not a re-render.
 *
 * Everything uPlot needs to rebuild a chart (the series' look, log scale) is in `shape`; data, width
 * and callbacks change without rebuilding it.
 */

export interface PlotSeries {
  label: string;
  colour: string;
  /** Line width in CSS px; 0 draws no line (one edge of a band). */
  width: number;
  alpha?: number;
  dash?: number[];
  /** Mark each point (a series of one or two points has no line to see). */
  dots?: boolean;
}

/** Fill between two series (indices into `series`, upper then lower). */
export interface PlotBand {
  upper: number;
  lower: number;
  colour: string;
  alpha: number;
}

/** A mark at one x above the lines (an event, not a value): a small triangle pointing up or down, in its own row. */
export interface PlotMarker {
  x: number;
  colour: string;
  up: boolean;
  /** 0 is the top row; each row is MARKER_ROW px lower. */
  row: number;
}

/** A tooltip row: the value first (a long run name is cut, never the number), then what it is. */
export interface TooltipLine {
  label: string;
  value?: string;
  colour?: string;
}

export interface CanvasPlotProps {
  width: number;
  height: number;
  /** x values (ascending), then one array per series, `null` where a series has no point. */
  data: [number[], ...(number | null)[][]];
  series: PlotSeries[];
  bands?: PlotBand[];
  logY?: boolean;
  /** A fixed y range (outliers ignored); null or absent: fit the data. Linear scale only. */
  yRange?: [number, number] | null;
  formatX: (v: number) => string;
  formatY: (v: number) => string;
  /** Axis ticks on whole numbers only (steps). */
  integerX?: boolean;
  yLabel?: string;
  /** What the tooltip says at a point: its index in `data[0]`. */
  tooltip: (index: number) => TooltipLine[];
  /** Drag across the plot selects an x range (the caller zooms to it). */
  onSelectX?: (from: number, to: number) => void;
  /** A double click on the plot (the caller zooms back out, as in W&B). */
  onDoubleClick?: () => void;
  /** Charts with the same key share the hover cursor (as W&B's charts do). */
  syncKey?: string;
  /** Event marks drawn over the plot's top edge (offloads on the memory timeline). */
  markers?: readonly PlotMarker[];
}

const AXIS_FONT = "12px system-ui, -apple-system, sans-serif";
const AXIS = { stroke: "#5b6470", font: AXIS_FONT, grid: { stroke: "#e3e6ea", width: 1, dash: [3, 3] }, ticks: { stroke: "#e3e6ea", width: 1, size: 4 } };
/** The y-axis's width and the plot's right padding: the plot is this much narrower than the chart. */
export const PLOT_INSET = 56 + 16;
const WHOLE_INCRS = Array.from({ length: 10 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

function rgba(hex: string, alpha: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

const MARKER_ROW = 9;

const markerRows = (markers: readonly PlotMarker[] | undefined) => (markers && markers.length > 0 ? Math.max(...markers.map((m) => m.row)) + 1 : 0);

/** Triangles above the plot area, one per marker, after uPlot drew the lines (canvas pixels). */
function drawMarkers(u: uPlot, markers: readonly PlotMarker[]) {
  if (markers.length === 0) return;
  const ctx = u.ctx;
  const dpr = uPlot.pxRatio;
  const half = 4 * dpr;
  const { left, top, width } = u.bbox;
  ctx.save();
  for (const m of markers) {
    const x = u.valToPos(m.x, "x", true);
    if (!Number.isFinite(x) || x < left - half || x > left + width + half) continue;
    // In the band the top padding keeps free above the plot area (markerRows), row 0 highest.
    const y = top - (markerRows(markers) - m.row - 0.5) * MARKER_ROW * dpr;
    ctx.beginPath();
    if (m.up) {
      ctx.moveTo(x, y - half);
      ctx.lineTo(x + half, y + half);
      ctx.lineTo(x - half, y + half);
    } else {
      ctx.moveTo(x - half, y - half);
      ctx.lineTo(x + half, y - half);
      ctx.lineTo(x, y + half);
    }
    ctx.closePath();
    ctx.fillStyle = m.colour;
    ctx.fill();
  }
  ctx.restore();
}

/** A tick's label; uPlot passes null for ticks it leaves unlabelled (a log axis's 2…9 between decades). */
const label = (v: number | null, format: (v: number) => string) => (v === null || v === undefined ? "" : format(v));

function shapeKey(p: CanvasPlotProps): string {
  return JSON.stringify([p.series, p.bands ?? [], p.logY ?? false, p.integerX ?? false, p.yLabel ?? "", Boolean(p.onSelectX), p.syncKey ?? "", p.height, markerRows(p.markers)]);
}

export function CanvasPlot(props: CanvasPlotProps) {
  const host = useRef<HTMLDivElement>(null);
  const tip = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  // Synced charts move their cursor with the hovered one; only the hovered one shows a tooltip.
  const hovered = useRef(false);
  // The data a chart was built with (not set again right after).
  const drawnData = useRef<CanvasPlotProps["data"] | null>(null);
  // The latest callbacks, read by uPlot's hooks, so a new closure does not rebuild the chart.
  const latest = useRef(props);
  latest.current = props;
  const shape = shapeKey(props);

  useLayoutEffect(() => {
    const el = host.current!;
    const p = latest.current;
    const opts: uPlot.Options = {
      width: p.width,
      height: p.height,
      // Marker rows get their own band above the lines, so a mark never hides a value.
      padding: [8 + markerRows(p.markers) * MARKER_ROW, 16, 0, 0],
      legend: { show: false },
      cursor: {
        y: false,
        // No hover dot on a band's edges (width 0).
        points: { size: (u, i) => (u.series[i]?.width ? 6 : 0) },
        drag: { x: Boolean(p.onSelectX), y: false, setScale: false, dist: 3 },
        ...(p.syncKey ? { sync: { key: p.syncKey } } : {}),
      },
      scales: {
        x: { time: false },
        y: p.logY ? { distr: 3 } : { range: (_u, min, max) => latest.current.yRange ?? uPlot.rangeNum(min, max, 0.1, true) },
      },
      axes: [
        {
          ...AXIS,
          size: 30,
          ...(p.integerX ? { incrs: WHOLE_INCRS } : {}),
          values: (_u, splits) => splits.map((v) => label(v, latest.current.formatX)),
        },
        {
          ...AXIS,
          size: 56,
          ...(p.yLabel ? { label: p.yLabel, labelSize: 14, labelFont: AXIS_FONT, size: 48 } : {}),
          values: (_u, splits) => splits.map((v) => label(v, latest.current.formatY)),
        },
      ],
      series: [
        {},
        ...p.series.map(
          (s): uPlot.Series => ({
            label: s.label,
            stroke: rgba(s.colour, s.alpha ?? 1),
            width: s.width,
            spanGaps: true,
            ...(s.dash ? { dash: s.dash } : {}),
            points: { show: Boolean(s.dots), size: 5, fill: s.colour, stroke: s.colour },
          }),
        ),
      ],
      bands: (p.bands ?? []).map((b) => ({ series: [b.upper + 1, b.lower + 1], fill: rgba(b.colour, b.alpha) })),
      hooks: {
        draw: [
          (u) => {
            drawMarkers(u, latest.current.markers ?? []);
            u.root.parentElement?.setAttribute("data-drawn", String(u.data[0].length));
          },
        ],
        setSelect: [
          (u) => {
            const { left, width } = u.select;
            if (width > 0 && latest.current.onSelectX) {
              latest.current.onSelectX(u.posToVal(left, "x"), u.posToVal(left + width, "x"));
            }
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          },
        ],
        setCursor: [(u) => showTooltip(u, tip.current!)],
      },
    };
    // `data-drawn` says this chart drew (tests and the page benchmark wait for it): set by the draw hook.
    el.removeAttribute("data-drawn");
    const u = new uPlot(opts, p.data as uPlot.AlignedData, el);
    drawnData.current = p.data;
    plot.current = u;
    return () => {
      u.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    if (!plot.current || drawnData.current === props.data) return;
    drawnData.current = props.data;
    plot.current.setData(props.data as uPlot.AlignedData);
  }, [props.data]);

  // New marks without new data (a move stored after the last sample): draw again, same scales.
  useEffect(() => {
    plot.current?.redraw(false, false);
  }, [props.markers]);

  useEffect(() => {
    const u = plot.current;
    if (u && (u.width !== props.width || u.height !== props.height)) u.setSize({ width: props.width, height: props.height });
  }, [props.width, props.height]);

  function showTooltip(u: uPlot, box: HTMLDivElement) {
    const idx = u.cursor.idx;
    const left = u.cursor.left ?? -1;
    if (idx === null || idx === undefined || left < 0 || !hovered.current) {
      box.hidden = true;
      return;
    }
    const lines = latest.current.tooltip(idx);
    // Built as text nodes: labels are actor and run names, which users type.
    box.replaceChildren(
      ...lines.map((line) => {
        const row = document.createElement("div");
        if (line.colour) {
          const swatch = document.createElement("i");
          swatch.style.background = line.colour;
          row.append(swatch);
        }
        if (line.value !== undefined) {
          const value = document.createElement("b");
          value.textContent = line.value;
          row.append(value, " ");
        }
        row.append(line.label);
        return row;
      }),
    );
    box.hidden = false;
    const over = u.over;
    const x = over.offsetLeft + left;
    // Beside the cursor, on the side with more room, and never past the chart's edges.
    const room = box.parentElement?.clientWidth ?? u.width;
    const width = box.offsetWidth;
    const wanted = left > over.clientWidth / 2 ? x - 12 - width : x + 12;
    box.style.left = `${Math.max(0, Math.min(wanted, room - width))}px`;
    box.style.top = `${over.offsetTop + 4}px`;
  }

  return (
    <div
      className="canvas-plot"
      style={{ height: props.height, cursor: props.onSelectX ? "crosshair" : undefined }}
      data-markers={props.markers ? props.markers.length : undefined}
      onMouseEnter={() => (hovered.current = true)}
      onDoubleClick={props.onDoubleClick}
      onMouseLeave={() => {
        hovered.current = false;
        tip.current!.hidden = true;
      }}
    >
      <div ref={host} />
      <div ref={tip} className="plot-tooltip small" hidden />
    </div>
  );
}
