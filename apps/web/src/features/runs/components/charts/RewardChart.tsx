"use client";

import { Area, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMetric } from "../../../../lib/format";
import type { MetricChartSeries } from "../../hooks/useRunCharts";
import { CHART_HEIGHT, ChartFrame, SERIES_COLOURS } from "./ChartFrame";

type Row = { step: number } & Record<string, number | [number, number]>;

/** Mean reward per actor with a ±1 std band. */
export function RewardChart({ series }: { series: MetricChartSeries[] }) {
  const rows = new Map<number, Row>();
  series.forEach((s, i) => {
    const std = new Map((s.band ?? []).map((p) => [p.step, p.value]));
    for (const p of s.points) {
      const row = rows.get(p.step) ?? { step: p.step };
      row[`mean${i}`] = p.value;
      const sd = std.get(p.step);
      if (sd !== undefined) row[`band${i}`] = [p.value - sd, p.value + sd];
      rows.set(p.step, row);
    }
  });
  const data = [...rows.values()].sort((a, b) => a.step - b.step);
  const drawn = series.reduce((n, s) => n + s.points.length, 0);
  const last = series[0]?.points.at(-1);

  return (
    <ChartFrame
      testId="chart-reward"
      title="Reward (mean ± std)"
      points={drawn}
      note={last ? `step ${last.step}: ${formatMetric(last.value)}` : undefined}
      emptyText="No reward reported yet"
    >
      <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
        <ComposedChart data={data} margin={{ top: 8, right: 16, bottom: 4, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e3e6ea" />
          <XAxis dataKey="step" type="number" domain={["dataMin", "dataMax"]} allowDecimals={false} tick={{ fontSize: 12 }} />
          <YAxis tick={{ fontSize: 12 }} width={52} tickFormatter={(v: number) => formatMetric(v, 2)} />
          <Tooltip
            formatter={(value) =>
              Array.isArray(value) ? value.map((v) => formatMetric(Number(v))).join(" … ") : formatMetric(Number(value))
            }
            labelFormatter={(step) => `step ${String(step)}`}
          />
          <Legend />
          {series.map((s, i) => (
            <Area
              key={`band${i}`}
              dataKey={`band${i}`}
              name={`${s.label} ± std`}
              stroke="none"
              fill={SERIES_COLOURS[i % SERIES_COLOURS.length]}
              fillOpacity={0.15}
              isAnimationActive={false}
              connectNulls
            />
          ))}
          {series.map((s, i) => (
            <Line
              key={`mean${i}`}
              dataKey={`mean${i}`}
              name={`${s.label} mean`}
              stroke={SERIES_COLOURS[i % SERIES_COLOURS.length]}
              strokeWidth={2}
              dot={false}
              isAnimationActive={false}
              connectNulls
            />
          ))}
        </ComposedChart>
      </ResponsiveContainer>
    </ChartFrame>
  );
}
