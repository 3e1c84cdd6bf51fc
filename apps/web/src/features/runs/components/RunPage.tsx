"use client";

import Link from "next/link";
import { useState } from "react";
import { errorMessage } from "../../../trpc/errors";
import { useRunLive } from "../hooks/useRunLive";
import { useRunViewParams } from "../hooks/useRunViewParams";
import { specNames } from "../lib/specNames";
import { LogsTab } from "./LogsTab";
import { MemoryPanel } from "./MemoryPanel";
import { RunErrorPanel } from "./RunErrorPanel";
import { ChartToolbar, RunCharts } from "./RunCharts";
import { CheckpointsPanel } from "./control/CheckpointsPanel";
import { RunHeader } from "./RunHeader";
import { SpecPanel } from "./SpecPanel";
import { TranscriptBrowser } from "./TranscriptBrowser";

const TABS = ["charts", "transcripts", "logs", "checkpoints", "spec"] as const;

export function RunPage({ runId }: { runId: string }) {
  // Tab, chart view and zoom live in the URL (shareable, kept on reload).
  const { tab, setTab, view, setView, zoom, setZoom } = useRunViewParams(TABS);
  const [maxPoints, setMaxPoints] = useState<number | null>(null);
  const { run, status, ended, connected, charts, live, version, names, metrics, memorySeries, episodesSeen, historyError } = useRunLive(runId, {
    maxPoints: maxPoints === null ? null : Math.min(4000, Math.max(100, maxPoints)),
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
      <RunHeader run={data} status={status ?? data.status} connected={connected} latest={charts.reward[0]?.points.at(-1)} />
      {status === "failed" && <RunErrorPanel run={data} fallbackLog={null} />}
      {status === "cancelled" && data.error && (
        <div className="panel small" style={{ marginBottom: "1rem" }}>
          <b>Cancelled:</b> {data.error}
        </div>
      )}
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
          onWidth={setMaxPoints}
        />
        <h3 className="group-title">Memory</h3>
        <MemoryPanel runId={runId} history={memorySeries} live={live} version={version} />
      </div>
      {tab === "transcripts" && <TranscriptBrowser runId={runId} actors={actors} environments={environments} live={!ended} episodesSeen={episodesSeen} />}
      {tab === "logs" && <LogsTab runId={runId} ended={ended} />}
      {tab === "checkpoints" && <CheckpointsPanel runId={runId} live={!ended} />}
      {tab === "spec" && <SpecPanel spec={data.spec} open />}
    </>
  );
}
