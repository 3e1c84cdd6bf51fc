"use client";

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMetric } from "../../../../lib/format";
import type { MetricChartSeries } from "../../hooks/useRunCharts";
import { CHART_HEIGHT, ChartFrame, SERIES_COLOURS } from "./ChartFrame";

type Row = { step: number } & Record<string, number>;

/** Training loss per trainable actor. */
export function LossChart({ series }: { series: MetricChartSeries[] }) {
  const rows = new Map<number, Row>();
  series.forEach((s, i) => {
    for (const p of s.points) {
      const row = rows.get(p.step) ?? { step: p.step };
      row[`loss${i}`] = p.value;
      rows.set(p.step, row);
    }
  });
  const data = [...rows.values()].sort((a, b) => a.step - b.step);
  const drawn = series.reduce((n, s) => n + s.points.length, 0);
  const last = series[0]?.points.at(-1);

  return (
    <ChartFrame
      testId="chart-loss"
      title="Loss"
      points={drawn}
      note={last ? `step ${last.step}: ${formatMetric(last.value)}` : undefined}
      emptyText="No loss reported yet"
    >
      <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 4, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e3e6ea" />
          <XAxis dataKey="step" type="number" domain={["dataMin", "dataMax"]} allowDecimals={false} tick={{ fontSize: 12 }} />
          <YAxis tick={{ fontSize: 12 }} width={52} tickFormatter={(v: number) => formatMetric(v, 2)} />
          <Tooltip formatter={(value) => formatMetric(Number(value))} labelFormatter={(step) => `step ${String(step)}`} />
          <Legend />
          {series.map((s, i) => (
            <Line
              key={`loss${i}`}
              dataKey={`loss${i}`}
              name={s.label}
              stroke={SERIES_COLOURS[i % SERIES_COLOURS.length]}
              strokeWidth={2}
              dot={false}
              isAnimationActive={false}
              connectNulls
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </ChartFrame>
  );
}
