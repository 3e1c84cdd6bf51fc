"use client";

import { useQueries } from "@tanstack/react-query";
import Link from "next/link";
import { StatusBadge } from "../../../components/StatusBadge";
import { useTRPC } from "../../../trpc/react";
import { LiveRunData } from "../../live/liveRunData";
import { MetricChart } from "../../runs/components/charts/MetricChart";
import { ChartToolbar } from "../../runs/components/RunCharts";
import { metricSeries } from "../../runs/hooks/useRunCharts";
import { selectMetricSeries } from "../../runs/lib/seriesColumns";
import { useRunViewParams } from "../../runs/hooks/useRunViewParams";
import { bandFor, chartTestId, groupMetrics } from "../../runs/lib/metricGroups";
import { SpecDiffTable } from "./SpecDiffTable";
import { SameRowTranscripts } from "./SameRowTranscripts";

/** One colour per run, used for it in every chart, table and column of the page. */
export const RUN_COLOURS = ["#2456c7", "#c2410c", "#15803d", "#7e22ce", "#0e7490", "#b91c1c", "#a16207", "#be185d", "#4d7c0f", "#334155"];

const NO_LIVE = new LiveRunData();
const COMPARE_TABS = ["charts"] as const;

/** 2–10 runs side by side: overlaid charts, the spec diff, the same dataset row's transcripts. */
export function ComparePage({ ids }: { ids: string[] }) {
  const trpc = useTRPC();
  // Chart options and zoom live in the URL, as on the run page (a comparison link opens the same view).
  const { view, setView, zoom, setZoom } = useRunViewParams(COMPARE_TABS);
  const runs = useQueries({ queries: ids.map((runId) => trpc.run.byId.queryOptions({ runId }, { retry: false })) });
  const names = useQueries({ queries: ids.map((runId) => trpc.run.metricNames.queryOptions({ runId }, { retry: false })) });
  const nameLists = names.map((n) => [...new Set((n.data?.series ?? []).map((s) => s.name))].sort());
  const metrics = useQueries({
    queries: ids.map((runId, i) =>
      trpc.run.metrics.queryOptions(
        { runId, names: nameLists[i]!.length > 0 ? nameLists[i]!.slice(0, 64) : ["reward/mean"], maxPoints: 600, ...(zoom ? { fromStep: zoom.from, toStep: zoom.to } : {}) },
        { enabled: names[i]!.isSuccess, placeholderData: (prev) => prev, refetchInterval: 10_000, select: selectMetricSeries },
      ),
    ),
  });

  if (ids.length < 2 || ids.length > 10) {
    return <div className="panel empty">Compare takes 2 to 10 runs: pick them in the <Link href="/runs">runs table</Link>.</div>;
  }
  const failed = runs.find((r) => r.isError);
  if (failed) return <div className="form-error">Could not load a run: {failed.error?.message}</div>;
  if (runs.some((r) => r.isPending)) return <p className="muted">Loading runs…</p>;
  const details = runs.map((r) => r.data!);
  const allNames = new Set(nameLists.flat());
  // Run names are unique (Run.displayName); the id's tail is a fallback should two ever look alike.
  const sameNames = new Set(details.map((d) => d.name)).size < details.length;
  const runLabel = (d: { id: string; name: string }) => (sameNames ? `${d.name} #${d.id.slice(-5)}` : d.name);

  return (
    <>
      <div className="section-head">
        <h1>Compare {ids.length} runs</h1>
      </div>
      <div className="panel" style={{ marginBottom: "1rem" }} data-testid="compare-runs">
        {details.map((d, i) => (
          <div key={d.id} style={{ display: "flex", gap: "0.6rem", alignItems: "center", padding: "0.15rem 0" }}>
            <span className="run-swatch" style={{ background: RUN_COLOURS[i] }} />
            <Link href={`/runs/${d.id}`}>{d.name}</Link>
            <span className="muted small">{d.specName}</span>
            <StatusBadge status={d.status} />
            <code className="muted small">{d.id}</code>
          </div>
        ))}
      </div>
      <ChartToolbar view={view} setView={setView} zoom={zoom} resetZoom={() => setZoom(null)} />
      {groupMetrics(allNames).map((g) => (
        <div key={g.title}>
          <h3 className="group-title">{g.title}</h3>
          <div className="charts">
            {g.names.map((name) => {
              const band = bandFor(name, allNames);
              const series = details.flatMap((d, i) =>
                metricSeries(name, metrics[i]!.data, NO_LIVE, band, true).map((s, j, all) => ({
                  ...s,
                  // The actor is named only where a run has several in this chart.
                  label: all.length > 1 ? `${runLabel(d)} · ${s.actor || name}` : runLabel(d),
                  colour: RUN_COLOURS[i]!,
                  dashed: j % 2 === 1,
                })),
              );
              return (
                <MetricChart
                  key={name}
                  testId={`compare-${chartTestId(name)}`}
                  title={name}
                  series={series}
                  view={view}
                  t0={null}
                  zoom={zoom}
                  onZoom={(from, to) => setZoom({ from, to })}
                  onResetZoom={() => setZoom(null)}
                  syncKey="compare-charts"
                />
              );
            })}
          </div>
        </div>
      ))}
      <SpecDiffTable runs={details.map((d, i) => ({ id: d.id, name: runLabel(d), colour: RUN_COLOURS[i]!, spec: d.spec }))} />
      <SameRowTranscripts runs={details.map((d, i) => ({ id: d.id, name: runLabel(d), colour: RUN_COLOURS[i]!, spec: d.spec }))} />
    </>
  );
}
