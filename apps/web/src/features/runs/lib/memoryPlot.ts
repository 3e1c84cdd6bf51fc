import type { PlotSeries, TooltipLine } from "../components/charts/CanvasPlot";
import type { MemoryChartData } from "../hooks/useRunCharts";

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

/** uPlot's columns for a memory chart: steps, then one column (MiB) per phase and actor. */
export function memoryPlot(data: MemoryChartData): { data: [number[], ...(number | null)[][]]; series: PlotSeries[]; tooltip: (i: number) => TooltipLine[] } {
  const steps = data.rows.map((r) => r.step);
  const columns = data.series.map((s) => data.rows.map((r) => r[s.key] ?? null));
  const series = data.series.map((s): PlotSeries => ({ label: s.label, colour: colourOf(s.phase), width: 1.75, dots: s.samples < 3 }));
  const tooltip = (i: number): TooltipLine[] => [
    { label: `step ${steps[i]}` },
    ...data.series.flatMap((s, j) => {
      const v = columns[j]![i];
      return v === null || v === undefined ? [] : [{ label: s.label, value: `${v.toFixed(1)} MiB`, colour: colourOf(s.phase) }];
    }),
  ];
  return { data: [steps, ...columns], series, tooltip };
}
