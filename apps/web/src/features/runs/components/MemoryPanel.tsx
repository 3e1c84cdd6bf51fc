"use client";

import { useQuery } from "@tanstack/react-query";
import { memo, useMemo, useState } from "react";
import { formatBytes } from "../../../lib/format";
import { useTRPC } from "../../../trpc/react";
import type { LiveRunData } from "../../live/liveRunData";
import { memoryChart, type MemoryField } from "../hooks/useRunCharts";
import type { MemorySeries } from "../server/schemas";
import { colourOf, type MemoryMarks } from "../lib/memoryPlot";
import { mergeOffloads, mergeTotals } from "../lib/offloadMarks";
import { specNames } from "../lib/specNames";
import { MemoryChart } from "./charts/MemoryChart";
import { MemoryEstimateComparison } from "./MemoryEstimateComparison";
import { OffloadTable } from "./OffloadTable";

const FIELDS: { field: MemoryField; label: string }[] = [
  { field: "allocatedBytes", label: "allocated" },
  { field: "reservedBytes", label: "reserved" },
  { field: "peakBytes", label: "peak" },
];

/**
 * Memory timelines, one per device (host RSS; per accelerator allocated / reserved / peak), each line a
 * phase (and actor), coloured by phase; and the table of the highest value per device, actor and phase,
 * which is where an OOM is traced to the phase that caused it.
 *
 * Memoised: the run page re-renders on every tab click and status poll, and redrawing these charts
 * then would delay the click. `live` is mutated in place; `version` says when it changed.
 */
export const MemoryPanel = memo(MemoryPanelView);

function MemoryPanelView(props: { runId: string; history: MemorySeries[] | undefined; live: LiveRunData; version: number; spec: unknown }) {
  const trpc = useTRPC();
  const [field, setField] = useState<MemoryField>("allocatedBytes");
  const peaks = useQuery(trpc.run.memoryPeaks.queryOptions({ runId: props.runId }, { refetchInterval: 10_000 }));
  // From the spec (a stable reference), so this memoised panel is not drawn again for a new array.
  const actors = useMemo(() => specNames(props.spec).actors, [props.spec]);
  // Read once: moves made after it arrive on the live stream (a long run's moves are a scan of its events, not a poll).
  const offloads = useQuery(trpc.run.offloads.queryOptions({ runId: props.runId }, { staleTime: Infinity }));
  const liveOffloads = props.live.offloads.size;
  const { marks, totals } = useMemo(() => {
    const markers = mergeOffloads(offloads.data, props.live.offloads.values());
    const marks: MemoryMarks | undefined = markers.length ? { markers, actors } : undefined;
    return { marks, totals: mergeTotals(offloads.data, props.live.offloads.values()) };
    // `live` is mutated in place: its size says when a move arrived.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [offloads.data, liveOffloads, actors]);
  const devices = [...new Set([...(props.history ?? []).map((s) => s.device), ...[...props.live.memory.values()].map((m) => m.device)])]
    .filter((d) => d !== "cpu")
    .sort();

  return (
    <>
      <MemoryChart data={memoryChart(props.history, props.live, "cpu", "rssBytes")} marks={marks} />
      {devices.map((device) => (
        <div key={device}>
          <div className="toolbar">
            <label>
              {device}
              <select value={field} onChange={(e) => setField(e.target.value as MemoryField)} aria-label={`Memory measure shown for ${device}`}>
                {FIELDS.map((f) => (
                  <option key={f.field} value={f.field}>
                    {f.label}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <MemoryChart
            testId={`chart-memory-${device.replace(/[^a-z0-9]+/gi, "-")}`}
            title={`${device} ${FIELDS.find((f) => f.field === field)?.label} by phase`}
            data={memoryChart(props.history, props.live, device, field)}
            marks={marks}
          />
        </div>
      ))}
      {totals.length > 0 ? <OffloadTable totals={totals} actors={actors} /> : null}
      <MemoryEstimateComparison spec={props.spec} peaks={peaks.data?.peaks} />
      <section className="panel" data-testid="memory-peaks">
        <h2>Highest memory per device, actor and phase</h2>
        {!peaks.data || peaks.data.peaks.length === 0 ? (
          <p className="muted small">No memory samples yet.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th>Device</th>
                <th>Actor</th>
                <th>Phase</th>
                <th>Host RSS</th>
                <th>Allocated</th>
                <th>Reserved</th>
                <th>Peak</th>
                <th>At step</th>
              </tr>
            </thead>
            <tbody>
              {(() => {
                const top = Math.max(...peaks.data.peaks.map((p) => p.peakBytes ?? p.allocatedBytes ?? p.rssBytes ?? 0));
                return peaks.data.peaks.map((p) => {
                  const v = p.peakBytes ?? p.allocatedBytes ?? p.rssBytes ?? 0;
                  return (
                    <tr key={`${p.device}|${p.actor}|${p.phase}`} style={v === top ? { fontWeight: 600 } : undefined}>
                      <td>{p.device}</td>
                      <td>{p.actor || "—"}</td>
                      <td>
                        <span className="run-swatch" style={{ background: colourOf(p.phase) }} />
                        {p.phase}
                      </td>
                      <td className="num">{p.rssBytes === null ? "—" : formatBytes(p.rssBytes)}</td>
                      <td className="num">{p.allocatedBytes === null ? "—" : formatBytes(p.allocatedBytes)}</td>
                      <td className="num">{p.reservedBytes === null ? "—" : formatBytes(p.reservedBytes)}</td>
                      <td className="num">{p.peakBytes === null ? "—" : formatBytes(p.peakBytes)}</td>
                      <td className="num">{p.atStep ?? "—"}</td>
                    </tr>
                  );
                });
              })()}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
