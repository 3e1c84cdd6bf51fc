"use client";

import Link from "next/link";
import dynamic from "next/dynamic";
import { useCallback, useEffect, useState } from "react";
import { errorMessage } from "../../../trpc/errors";
import { AdvisoriesPanel } from "../../advisories/components/AdvisoriesPanel";
import { EloPanel } from "../../ratings/components/EloPanel";
import { GpuTimelinePanel } from "../../timeline/components/GpuTimelinePanel";
import { useRunLive } from "../hooks/useRunLive";
import { useRunViewParams } from "../hooks/useRunViewParams";
import { RUN_TABS } from "../lib/runView";
import { CHART_POINTS_COOKIE, chartPointsFor, clampChartPoints, DEFAULT_CHART_POINTS } from "../lib/seriesRequest";
import { specNames } from "../lib/specNames";
import { EvalResultsPanel } from "./EvalResultsPanel";
import { MemoryPanel } from "./MemoryPanel";
import { RunErrorPanel } from "./RunErrorPanel";
import { ChartToolbar, RunCharts } from "./RunCharts";
import { klOffActors } from "../lib/rewardSummary";
import { roundSpecsOf } from "../lib/roundSpecTurns";
import { RunHeader } from "./RunHeader";

// The other tabs' code loads when the browser is idle after the charts (or on the tab's first
// click), so the page's first JavaScript is the charts' alone.
const loadTranscripts = () => import("./TranscriptBrowser").then((m) => m.TranscriptBrowser);
const loadLogs = () => import("./LogsTab").then((m) => m.LogsTab);
const loadCheckpoints = () => import("./control/CheckpointsPanel").then((m) => m.CheckpointsPanel);
const loadSpec = () => import("./SpecPanel").then((m) => m.SpecPanel);
const tabLoading = () => <p className="muted">Loading…</p>;
const TranscriptBrowser = dynamic(loadTranscripts, { loading: tabLoading });
const LogsTab = dynamic(loadLogs, { loading: tabLoading });
const CheckpointsPanel = dynamic(loadCheckpoints, { loading: tabLoading });
const SpecPanel = dynamic(loadSpec, { loading: tabLoading });

function usePreloadTabsWhenIdle() {
  useEffect(() => {
    const preload = () => void Promise.all([loadTranscripts(), loadLogs(), loadCheckpoints(), loadSpec()]);
    if (typeof window.requestIdleCallback !== "function") {
      const timer = setTimeout(preload, 1000);
      return () => clearTimeout(timer);
    }
    const handle = window.requestIdleCallback(preload, { timeout: 3000 });
    return () => window.cancelIdleCallback(handle);
  }, []);
}

const TABS = RUN_TABS;

/** Remembers a chart's width for the server, which buckets the next page load's series to it. */
function rememberChartWidth(points: number) {
  document.cookie = `${CHART_POINTS_COOKIE}=${clampChartPoints(points)}; path=/; max-age=31536000; samesite=lax`;
}

/**
 * `initialChartPoints`: the points per series the server prefetched the charts with (a chart's
 * width remembered from the last visit); kept until the measured width differs by more than 20%.
 */
export function RunPage({ runId, initialChartPoints = DEFAULT_CHART_POINTS }: { runId: string; initialChartPoints?: number }) {
  // Tab, chart view and zoom live in the URL (shareable, kept on reload).
  const { tab, setTab, view, setView, zoom, setZoom } = useRunViewParams(TABS);
  const [maxPoints, setMaxPoints] = useState(initialChartPoints);
  usePreloadTabsWhenIdle();
  const onChartWidth = useCallback((width: number) => {
    rememberChartWidth(width);
    setMaxPoints((current) => chartPointsFor(current, width));
  }, []);
  const { run, status, ended, connected, charts, live, version, names, metrics, memorySeries, episodesSeen, historyError } = useRunLive(runId, {
    maxPoints,
    zoom,
  });

  if (run.isPending) return <p className="muted">Loading run…</p>;
  if (run.isError) {
    return (
      <div className="panel empty">
        <p>
          <b>{run.error.data?.code === "NOT_FOUND" ? "Run not found." : `Could not load the run: ${errorMessage(run.error)}`}</b>
        </p>
        <Link href="/">Back to the dashboard</Link>
      </div>
    );
  }
  const data = run.data;
  const { actors, environments } = specNames(data.spec);
  const t0 = (data.startedAt ?? data.createdAt).getTime();

  return (
    <>
      <RunHeader run={data} status={status ?? data.status} connected={connected} latest={charts.reward[0]?.points.at(-1)} rewards={charts.reward} />
      {status === "failed" && <RunErrorPanel run={data} fallbackLog={null} />}
      {status === "cancelled" && data.error && (
        <div className="panel small" style={{ marginBottom: "1rem" }}>
          <b>Cancelled:</b> {data.error}
        </div>
      )}
      <AdvisoriesPanel runId={runId} live={!ended} />
      {historyError && <div className="form-error">Could not load chart history: {errorMessage(historyError)}</div>}
      <div className="tabs" role="tablist">
        {TABS.map((t) => (
          <button key={t} type="button" role="tab" aria-selected={tab === t} onClick={() => setTab(t)} data-testid={`tab-${t}`}>
            {t[0]!.toUpperCase() + t.slice(1)}
          </button>
        ))}
      </div>
      {/* Charts stay mounted (hidden) on other tabs, so they keep up with the live stream. */}
      <div hidden={tab !== "charts"}>
        <EvalResultsPanel runId={runId} live={!ended} version={live.metricVersion} />
        <ChartToolbar view={view} setView={setView} zoom={zoom} resetZoom={() => setZoom(null)} />
        <RunCharts
          names={names}
          history={metrics}
          live={live}
          version={live.metricVersion}
          actors={actors}
          view={view}
          t0={t0}
          zoom={zoom}
          onZoom={(from, to) => setZoom({ from, to })}
          onResetZoom={() => setZoom(null)}
          onWidth={onChartWidth}
          klOff={klOffActors(data.spec)}
          games={<EloPanel runId={runId} actors={actors} live={!ended} version={live.metricVersion} />}
        />
        <h3 className="group-title">Memory</h3>
        <MemoryPanel runId={runId} history={memorySeries} live={live} version={version} spec={data.spec} />
        <GpuTimelinePanel runId={runId} actors={actors} live={!ended} />
      </div>
      {tab === "transcripts" && <TranscriptBrowser runId={runId} actors={actors} environments={environments} live={!ended} episodesSeen={episodesSeen} roundSpecs={roundSpecsOf(data.spec)} />}
      {tab === "logs" && <LogsTab runId={runId} ended={ended} />}
      {tab === "checkpoints" && <CheckpointsPanel runId={runId} live={!ended} />}
      {tab === "spec" && <SpecPanel spec={data.spec} open />}
    </>
  );
}
