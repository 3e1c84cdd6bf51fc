"use client";

import { useRef } from "react";
import { useElementWidth } from "../../hooks/useElementWidth";
import { CanvasPlot, type CanvasPlotProps } from "./CanvasPlot";
import { CHART_HEIGHT } from "./ChartFrame";

/**
 * A chart's plot at the width it is given (`number`: one measurement for a grid of charts), or at
 * the width of its place (`undefined`: it measures itself). `null`, not measured yet (the server
 * render and the first browser render): the plot's place is kept.
 */
export function SizedPlot({ width, ...plot }: Omit<CanvasPlotProps, "width" | "height"> & { width: number | null | undefined }) {
  const ref = useRef<HTMLDivElement>(null);
  const measured = useElementWidth(ref, 1);
  const placeholder = <div style={{ height: CHART_HEIGHT }} />;
  if (width !== undefined) return width === null ? placeholder : <CanvasPlot {...plot} width={width} height={CHART_HEIGHT} />;
  return <div ref={ref}>{measured === null ? placeholder : <CanvasPlot {...plot} width={measured} height={CHART_HEIGHT} />}</div>;
}
