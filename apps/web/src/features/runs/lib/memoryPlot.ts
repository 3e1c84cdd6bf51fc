import { formatBytes } from "../../../lib/format";
import type { PlotMarker, PlotSeries, TooltipLine } from "../components/charts/CanvasPlot";
import type { MemoryChartData } from "../hooks/useRunCharts";
import type { OffloadMarker } from "../server/offloads";
import { markerStep, markerTooltip, plotMarkers } from "./offloadMarks";

/** One colour per training phase, stable across runs so a reader learns them. */
const PHASE_COLOURS: Record<string, string> = {
  setup: "#6b7280",
  rollout: "#2456c7",
  reward: "#ca8a04",
  reference: "#0e7490",
  update: "#c2410c",
  weight_sync: "#7e22ce",
  eval: "#15803d",
  checkpoint: "#be185d",
  idle: "#94a3b8",
};
export const colourOf = (phase: string) => PHASE_COLOURS[phase] ?? "#334155";

/** Lines of one phase share its colour; each actor after the first gets its own dash (as in compare). */
const DASHES: (number[] | undefined)[] = [undefined, [6, 3], [2, 3], [8, 3, 2, 3]];
export function actorDash(series: readonly { actor: string }[], actor: string): number[] | undefined {
  const actors = [...new Set(series.map((s) => s.actor).filter((a) => a !== ""))].sort();
  const i = actors.indexOf(actor);
  return i <= 0 ? undefined : DASHES[i % DASHES.length];
}

export interface MemoryPlot {
  data: [number[], ...(number | null)[][]];
  series: PlotSeries[];
  /** The y-axis unit: GiB once a value reaches 1 GiB (a GPU's 40,000 MiB reads better as 39.1 GiB). */
  unit: "MiB" | "GiB";
  tooltip: (i: number) => TooltipLine[];
  markers: PlotMarker[];
}

/** Offload moves to mark on the timeline, with the spec's actors (for their colours). */
export interface MemoryMarks {
  markers: readonly OffloadMarker[];
  actors: readonly string[];
}

/**
 * uPlot's columns for a memory chart (rows in MiB): steps, then one column per phase and actor,
 * leaving out the `hidden` series (their dashes stay as they were: an actor keeps its look).
 */
export function memoryPlot(data: MemoryChartData, hidden: ReadonlySet<string> = new Set(), marks?: MemoryMarks): MemoryPlot {
  const shown = data.series.filter((s) => !hidden.has(s.key));
  // A move at a step with no sample still gets an x (empty values: lines span it), so its tooltip can be reached.
  const moves = marks?.markers ?? [];
  const sampled = new Set(data.rows.map((r) => r.step));
  const extra = [...new Set(moves.map(markerStep))].filter((s) => !sampled.has(s)).map((step) => ({ step }) as MemoryChartData["rows"][number]);
  const rows = extra.length ? [...data.rows, ...extra].sort((a, b) => a.step - b.step) : data.rows;
  const steps = rows.map((r) => r.step);
  const mib = shown.map((s) => rows.map((r) => r[s.key] ?? null));
  const top = Math.max(0, ...mib.flat().map((v) => v ?? 0));
  const unit = top >= 1024 ? "GiB" : "MiB";
  const columns = unit === "GiB" ? mib.map((c) => c.map((v) => (v === null ? null : v / 1024))) : mib;
  const series = shown.map((s): PlotSeries => {
    const dash = actorDash(data.series, s.actor);
    return { label: s.label, colour: colourOf(s.phase), width: 1.75, dots: s.samples < 3, ...(dash ? { dash } : {}) };
  });
  const tooltip = (i: number): TooltipLine[] => [
    { label: `step ${steps[i]}` },
    ...shown.flatMap((s, j) => {
      const v = mib[j]![i];
      return v === null || v === undefined ? [] : [{ label: s.label, value: formatBytes(v * 2 ** 20), colour: colourOf(s.phase) }];
    }),
    ...(moves.length ? markerTooltip(moves, steps[i]!, marks?.actors ?? []) : []),
  ];
  return { data: [steps, ...columns], series, unit, tooltip, markers: plotMarkers(moves, marks?.actors ?? []) };
}
