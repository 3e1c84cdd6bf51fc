"use client";

import { useMemo, useState } from "react";
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatBytes } from "../../../lib/format";
import { RunSpec } from "@troupe/contracts";
import { useLiveRunnerGpus } from "../../runners/hooks/useLiveRunnerGpus";
import { compareMemory, estimateForRun, type MeasuredPeak } from "../lib/memoryComparison";
import { memoryTarget } from "../lib/memoryTarget";

const MIB = 1024 ** 2;
const label = (phase: string, actor: string) => (actor ? `${phase} · ${actor}` : phase);

/**
 * The pre-flight memory estimate (packages/contracts/src/memory) beside what the run measured, per device,
 * phase and actor: a small Recharts bar chart and the table under it. gpu-runtime/tests/test_memory_estimate.py
 * holds the estimate to measured peaks; here a user sees how far it is for their own run.
 */
export function MemoryEstimateComparison(props: { spec: unknown; peaks: readonly MeasuredPeak[] | undefined }) {
  const [promptTokens, setPromptTokens] = useState(256);
  // For the memory it ran on (measured devices), else the runners it can run on: never cuda:0 on a CPU host.
  const liveRunners = useLiveRunnerGpus();
  const measuredDevices = useMemo(() => [...new Set((props.peaks ?? []).map((p) => p.device))], [props.peaks]);
  const target = useMemo(() => {
    const parsed = RunSpec.safeParse(props.spec);
    return parsed.success ? memoryTarget(parsed.data, { measuredDevices, ...(liveRunners ? { liveRunners } : {}) }) : null;
  }, [props.spec, measuredDevices, liveRunners]);
  const estimate = useMemo(() => estimateForRun(props.spec, promptTokens, target?.device), [props.spec, promptTokens, target?.device]);
  const rows = useMemo(() => compareMemory(estimate, props.peaks ?? []), [estimate, props.peaks]);
  const unknown = estimate?.actors.filter((a) => a.memory === null && a.basis === "unknown").map((a) => a.name) ?? [];
  const devices = [...new Set(rows.map((r) => r.device))];
  return (
    <section className="panel" data-testid="memory-estimate-vs-measured">
      <h2>Estimate against measured, per phase</h2>
      <div className="toolbar">
        <label>
          Prompt length (tokens){" "}
          <input
            type="number"
            min={1}
            style={{ width: 80 }}
            aria-label="Prompt length for the estimate (tokens)"
            value={promptTokens}
            onChange={(e) => setPromptTokens(Math.max(1, Number(e.target.value) || 1))}
          />
        </label>
        <span className="muted small">The spec does not know its prompts&apos; length: the estimate assumes this many tokens.</span>
      </div>
      {target && (
        <p className="muted small" data-testid="memory-estimate-target">
          Estimated for {target.device === "cpu" ? "host memory" : "GPU memory"}: {target.why}.
        </p>
      )}
      {rows.length === 0 ? (
        <p className="muted small">
          {estimate === null
            ? "This run's spec predates the estimate."
            : unknown.length
              ? `No estimate: the shape of ${unknown.join(", ")} is not known here (a local model or an id outside the catalog).`
              : estimate.actors.some((a) => a.memory !== null)
                ? "Nothing measured yet on the devices the estimate is for."
                : "No local model to estimate."}
        </p>
      ) : (
        devices.map((device) => {
          const data = rows
            .filter((r) => r.device === device)
            .map((r) => ({
              phase: label(r.phase, r.actor),
              estimate: Number(((r.estimate ?? 0) / MIB).toFixed(1)),
              measured: r.measured === null ? null : Number((r.measured / MIB).toFixed(1)),
            }));
          return (
            <div key={device}>
              <h3 className="small">{device === "cpu" ? "Host memory (cpu)" : device}</h3>
              <div data-testid={`memory-estimate-chart-${device.replace(/[^a-z0-9]+/gi, "-")}`} style={{ width: "100%", height: 220 }}>
                <ResponsiveContainer>
                  <BarChart data={data} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
                    <CartesianGrid strokeDasharray="3 3" vertical={false} />
                    <XAxis dataKey="phase" fontSize={12} />
                    <YAxis unit=" MiB" fontSize={12} width={80} />
                    <Tooltip formatter={(v) => `${String(v)} MiB`} />
                    <Legend />
                    <Bar dataKey="estimate" name="estimate" fill="#8c959f" isAnimationActive={false} />
                    <Bar dataKey="measured" name="measured peak" fill="#2456c7" isAnimationActive={false} />
                  </BarChart>
                </ResponsiveContainer>
              </div>
            </div>
          );
        })
      )}
      {rows.length > 0 && (
        <table className="table" data-testid="memory-estimate-table">
          <thead>
            <tr>
              <th>Device</th>
              <th>Phase</th>
              <th>Actor</th>
              <th>Estimate</th>
              <th>Measured peak</th>
              <th>Estimate vs measured</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.device}|${r.phase}|${r.actor}`}>
                <td>{r.device}</td>
                <td>{r.phase}</td>
                <td>{r.actor || "—"}</td>
                <td className="num">{formatBytes(r.estimate)}</td>
                <td className="num">{r.measured === null ? "not yet" : formatBytes(r.measured)}</td>
                <td className="num">{r.error === null ? "—" : `${r.error >= 0 ? "+" : ""}${(r.error * 100).toFixed(0)}%`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {estimate?.onCpu && rows.length > 0 && (
        <p className="hint muted small">
          A CPU run&apos;s host peaks include the process itself (Python, torch&apos;s libraries, the data: about 450 MiB on these
          machines, measured), which the estimate leaves out: on a small model that is most of what is measured.
        </p>
      )}
    </section>
  );
}
