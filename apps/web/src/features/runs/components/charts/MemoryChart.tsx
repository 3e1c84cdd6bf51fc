"use client";

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMiB } from "../../../../lib/format";
import type { MemoryChartData } from "../../hooks/useRunCharts";
import { plainTicks } from "./axisTick";
import { CHART_HEIGHT, ChartFrame } from "./ChartFrame";

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

/** Host RSS by training phase (one line per phase), in MiB. */
export function MemoryChart({
  data,
  testId = "chart-memory",
  title = "Host memory (RSS) by phase",
}: {
  data: MemoryChartData;
  testId?: string;
  title?: string;
}) {
  return (
    <ChartFrame
      testId={testId}
      title={title}
      points={data.points}
      note={data.peakBytes !== null ? `peak ${formatMiB(data.peakBytes)}` : undefined}
      emptyText="No memory samples yet"
    >
      <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
        <LineChart data={data.rows} margin={{ top: 8, right: 16, bottom: 4, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e3e6ea" />
          <XAxis dataKey="step" type="number" domain={["dataMin", "dataMax"]} allowDecimals={false} {...plainTicks} />
          <YAxis
            {...plainTicks}
            width={60}
            domain={["auto", "auto"]}
            tickFormatter={(v: number) => v.toFixed(0)}
            label={{ value: "MiB", angle: -90, position: "insideLeft", fontSize: 12, fill: "#5b6470" }}
          />
          <Tooltip formatter={(value) => `${Number(value).toFixed(1)} MiB`} labelFormatter={(step) => `step ${String(step)}`} />
          <Legend itemSorter={null} />
          {data.series.map((s) => (
            <Line
              key={s.key}
              dataKey={s.key}
              name={s.label}
              stroke={colourOf(s.phase)}
              strokeWidth={1.75}
              // A phase seen once (setup) has no line to draw: show its point.
              dot={s.samples < 3 ? { r: 3, fill: colourOf(s.phase) } : false}
              isAnimationActive={false}
              connectNulls
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </ChartFrame>
  );
}
