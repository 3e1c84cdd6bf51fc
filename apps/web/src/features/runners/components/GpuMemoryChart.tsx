"use client";

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { RunnerView } from "../server/runnersView";

const GIB = 1024 ** 3;

/** One bar per GPU (host:index): memory in use and free, in GiB. Recharts: a small declarative chart. */
export function GpuMemoryChart({ runners }: { runners: RunnerView[] }) {
  const data = runners
    .filter((r) => r.state === "live")
    .flatMap((r) =>
      r.gpus.map((g) => {
        const total = (g.totalBytes ?? 0) / GIB;
        const free = (g.freeBytes ?? g.totalBytes ?? 0) / GIB;
        return { gpu: `${r.id}:${g.index}`, used: Number((total - free).toFixed(2)), free: Number(free.toFixed(2)) };
      }),
    );
  if (data.length === 0) {
    return (
      <div className="chart-empty" data-testid="gpu-memory-chart-empty">
        No live runner has a GPU: runs train on CPU processes.
      </div>
    );
  }
  return (
    <div data-testid="gpu-memory-chart" style={{ width: "100%", height: 240 }}>
      <ResponsiveContainer>
        <BarChart data={data} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="gpu" fontSize={12} />
          <YAxis unit=" GiB" fontSize={12} width={70} />
          <Tooltip formatter={(v) => `${String(v)} GiB`} />
          <Legend />
          <Bar dataKey="used" stackId="m" name="in use" fill="#cf222e" isAnimationActive={false} />
          <Bar dataKey="free" stackId="m" name="free" fill="#2da44e" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
