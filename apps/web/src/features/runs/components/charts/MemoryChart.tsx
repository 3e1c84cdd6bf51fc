"use client";

import { useMemo } from "react";
import { formatBytes } from "../../../../lib/format";
import type { MemoryChartData } from "../../hooks/useRunCharts";
import { actorDash, colourOf, memoryPlot, type MemoryMarks } from "../../lib/memoryPlot";
import { stepLabel, tickLabel } from "../../lib/metricPlot";
import { ChartFrame, ChartLegend, useHiddenLines } from "./ChartFrame";
import { SizedPlot } from "./SizedPlot";

/**
 * Memory by training phase (one line per phase and actor), in MiB or GiB, with each offload / reload move
 * marked above the lines (`marks`).
 */
export function MemoryChart({
  data,
  testId = "chart-memory",
  title = "Host memory (RSS) by phase",
  marks,
}: {
  data: MemoryChartData;
  testId?: string;
  title?: string;
  marks?: MemoryMarks;
}) {
  const [hidden, toggle] = useHiddenLines();
  const plot = useMemo(() => memoryPlot(data, hidden, marks), [data, hidden, marks]);
  return (
    <ChartFrame
      testId={testId}
      title={title}
      points={data.points}
      note={data.peakBytes !== null ? `peak ${formatBytes(data.peakBytes)}` : undefined}
      emptyText="No memory samples yet"
    >
      <SizedPlot
        width={undefined}
        data={plot.data}
        series={plot.series}
        integerX
        yLabel={plot.unit}
        formatX={stepLabel}
        formatY={tickLabel}
        tooltip={plot.tooltip}
        markers={plot.markers}
      />
      <ChartLegend
        items={data.series.map((s) => ({ key: s.key, label: s.label, colour: colourOf(s.phase), dashed: actorDash(data.series, s.actor) !== undefined }))}
        hidden={hidden}
        onToggle={toggle}
      />
    </ChartFrame>
  );
}
