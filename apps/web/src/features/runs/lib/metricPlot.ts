import { formatDuration, formatMetric } from "../../../lib/format";
import type { PlotBand, PlotSeries, TooltipLine } from "../components/charts/CanvasPlot";
import type { MetricChartSeries } from "../hooks/useRunCharts";
import { emaDebiased } from "./ema";

/* The pure half of a metric chart: uPlot columns, ticks and tooltips from bucketed series. */

export interface ChartView {
  x: "step" | "time";
  log: boolean;
  /** EMA weight in [0, 1): 0 draws the raw line only. */
  smoothing: number;
  /** Scale the y-axis to the lines' 1st–99th percentile, so one spike does not flatten the rest (as W&B's
   *  "ignore outliers"); what lies outside runs off the chart. Linear scale only. */
  ignoreOutliers: boolean;
}

export interface DrawnSeries extends MetricChartSeries {
  colour: string;
  /** Dashed line (e.g. a second actor in a comparison). */
  dashed?: boolean;
}

/** Axis ticks with 3 significant digits, so close values (0.0025, 0.005) stay apart. */
export const tickLabel = (v: number) =>
  v === 0 ? "0" : Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5 ? v.toExponential(1) : String(Number(v.toPrecision(3)));

/** Step ticks in short form past 10,000 (250k, 1.2M): a long run's steps would not fit under a chart. */
export const stepLabel = (v: number) =>
  Math.abs(v) >= 1e6 ? `${Number((v / 1e6).toPrecision(3))}M` : Math.abs(v) >= 1e4 ? `${Number((v / 1e3).toPrecision(3))}k` : String(v);

type Column = (number | null)[];

/** What a metric chart draws, in uPlot's columns: one x array, then the series' columns. */
export interface MetricPlot {
  data: [number[], ...Column[]];
  series: PlotSeries[];
  bands: PlotBand[];
  /** The step at each x (the time axis needs it back for zoom and tooltips). */
  steps: number[];
  /** The y-axis range when outliers are ignored; null: fit everything drawn. */
  yRange: [number, number] | null;
  tooltip: (index: number) => TooltipLine[];
}

/**
 * The columns of a metric chart. Per series, in drawing order: the ± std band's two edges (when the
 * series has one), the min–max band's edges (when a bucket held more than one point, so a spike inside
 * it stays visible), the raw line (faint under a smoothed one) and the smoothed line. Log scale draws
 * no bands and leaves out values ≤ 0.
 */
export function metricPlot(series: DrawnSeries[], view: ChartView, t0: number | null): MetricPlot {
  const time = view.x === "time" && t0 !== null;
  const xOf = (p: { step: number; ts?: number }) => (time ? ((p.ts ?? t0!) - t0!) / 1000 : p.step);
  const positive = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? null : view.log && v <= 0 ? null : v);

  const stepOfX = new Map<number, number>();
  for (const s of series) for (const p of s.points) if (!stepOfX.has(xOf(p))) stepOfX.set(xOf(p), p.step);
  const xs = [...stepOfX.keys()].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const empty = (): Column => new Array<number | null>(xs.length).fill(null);

  const columns: Column[] = [];
  const drawn: PlotSeries[] = [];
  const bands: PlotBand[] = [];
  // Per series: the column index of its line, its band and range columns, for the tooltip.
  const lookup: { label: string; colour: string; line: Column; lo?: Column; hi?: Column; sd?: Map<number, number> }[] = [];
  const edge = (s: DrawnSeries): PlotSeries => ({ label: "", colour: s.colour, width: 0 });
  const dash = (s: DrawnSeries) => (s.dashed ? [5, 3] : undefined);

  for (const s of series) {
    const sd = new Map((s.band ?? []).map((p) => [p.step, p.value]));
    const hasBand = !view.log && s.points.some((p) => sd.has(p.step));
    const hasRange = !view.log && s.points.some((p) => p.min !== p.max);
    const raw = empty();
    const smooth = view.smoothing > 0 ? empty() : null;
    const bandLo = hasBand ? empty() : null;
    const bandHi = hasBand ? empty() : null;
    const lo = hasRange ? empty() : null;
    const hi = hasRange ? empty() : null;
    const smoothed = smooth ? emaDebiased(s.points.map((p) => p.value), view.smoothing) : null;
    s.points.forEach((p, j) => {
      const i = at.get(xOf(p))!;
      raw[i] = positive(p.value);
      if (smooth) smooth[i] = positive(smoothed![j]);
      if (lo && hi) {
        lo[i] = p.min;
        hi[i] = p.max;
      }
      const d = sd.get(p.step);
      if (bandLo && bandHi && d !== undefined) {
        bandLo[i] = p.value - d;
        bandHi[i] = p.value + d;
      }
    });
    if (bandLo && bandHi) {
      bands.push({ upper: columns.length, lower: columns.length + 1, colour: s.colour, alpha: 0.12 });
      columns.push(bandHi, bandLo);
      drawn.push(edge(s), edge(s));
    }
    if (lo && hi) {
      bands.push({ upper: columns.length, lower: columns.length + 1, colour: s.colour, alpha: 0.22 });
      columns.push(hi, lo);
      drawn.push(edge(s), edge(s));
    }
    const few = s.points.length < 3;
    columns.push(raw);
    drawn.push(
      smooth
        ? { label: `${s.label} (raw)`, colour: s.colour, width: 1, alpha: 0.25, dash: dash(s), dots: few }
        : { label: s.label, colour: s.colour, width: 1.75, dash: dash(s), dots: few },
    );
    if (smooth) {
      columns.push(smooth);
      drawn.push({ label: s.label, colour: s.colour, width: 2, dash: dash(s) });
    }
    lookup.push({ label: s.label, colour: s.colour, line: smooth ?? raw, lo: lo ?? undefined, hi: hi ?? undefined, sd: hasBand ? sd : undefined });
  }

  const steps = xs.map((x) => stepOfX.get(x)!);
  const tooltip = (i: number): TooltipLine[] => {
    const head = time ? `t+${formatDuration(xs[i]! * 1000)} · step ${steps[i]}` : `step ${steps[i]}`;
    const lines: TooltipLine[] = [{ label: head }];
    for (const l of lookup) {
      const v = l.line[i];
      if (v === null || v === undefined) continue;
      let value = formatMetric(v);
      const d = l.sd?.get(steps[i]!);
      if (d !== undefined) value += ` ± ${formatMetric(d)}`;
      if (l.lo?.[i] != null && l.hi?.[i] != null && l.lo[i] !== l.hi[i]) value += ` (${formatMetric(l.lo[i])} … ${formatMetric(l.hi[i])})`;
      lines.push({ label: l.label, value, colour: l.colour });
    }
    return lines;
  };
  const yRange = view.ignoreOutliers && !view.log ? percentileRange(lookup.flatMap((l) => l.line.filter((v): v is number => v !== null))) : null;
  return { data: [xs, ...columns], series: drawn, bands, steps, tooltip, yRange };
}

/**
 * The 1st to 99th percentile of the values, padded by a tenth of the span: null for fewer than 20
 * values (too few to call any an outlier) or when that range already holds them all.
 */
export function percentileRange(values: number[]): [number, number] | null {
  if (values.length < 20) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
  const lo = at(0.01);
  const hi = at(0.99);
  if (lo === sorted[0] && hi === sorted[sorted.length - 1]) return null;
  const pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.1 || 1;
  return [lo - pad, hi + pad];
}

/** The step nearest to an x value (`xs` ascending). */
export function nearestStep(xs: number[], steps: number[], x: number): number | undefined {
  if (xs.length === 0) return undefined;
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  const i = lo > 0 && Math.abs(xs[lo - 1]! - x) <= Math.abs(xs[lo]! - x) ? lo - 1 : lo;
  return steps[i];
}
