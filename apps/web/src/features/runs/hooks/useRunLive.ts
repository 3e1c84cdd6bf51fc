"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { isTerminal, type RunEvent } from "@troupe/contracts";
import { useRef, useState } from "react";
import { useTRPC } from "../../../trpc/react";
import { furthest, LiveRunData } from "../../live/liveRunData";
import { useRunEvents } from "../../live/hooks/useRunEvents";
import { selectMetricSeries } from "../lib/seriesColumns";
import { metricsQueryInput, storedMetricNames } from "../lib/seriesRequest";
import { useRunCharts } from "./useRunCharts";
import { refetchAfterWrite } from "../../../trpc/refetch";

/** What the charts ask the server for: points per series (the chart's width) and an optional zoom. */
export interface SeriesRequest {
  /** Buckets per series: a chart's width (the server prefetches at the width remembered from the last visit). */
  maxPoints: number;
  zoom: { from: number; to: number } | null;
}

/**
 * Everything the run page shows that moves: the run row, chart history (tRPC) and live events (SSE).
 *
 * Order matters for "no point lost": the live stream resumes after the `lastSeq` of the first run
 * load, and the chart history is fetched only after that load, so it holds at least every event up
 * to that seq (a run's rows and its lastSeq are written in one transaction). Points in both are
 * keyed and drawn once. The metric names come from the run's data (and from what arrives live).
 */
export function useRunLive(runId: string, request: SeriesRequest = { maxPoints: 1000, zoom: null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const run = useQuery(
    trpc.run.byId.queryOptions(
      { runId },
      {
        retry: false,
        // The server rendered the page with the row (prefetchRunPage): no second read on mount.
        refetchOnMount: false,
        // Timings, heartbeat and cancel state move without events of their own: poll them gently while live.
        refetchInterval: (query) => (query.state.data && isTerminal(query.state.data.status) ? false : 5000),
      },
    ),
  );

  const [liveFrom, setLiveFrom] = useState<number | null>(null);
  if (run.data && liveFrom === null) setLiveFrom(run.data.lastSeq);

  const liveRef = useRef<LiveRunData>(null);
  liveRef.current ??= new LiveRunData();
  const live = liveRef.current;
  const [version, setVersion] = useState(0);

  const historyReady = liveFrom !== null;
  // History is fetched fresh on every mount (gcTime 0): a cached copy could predate `liveFrom` (the
  // run row is polled and cached too) and leave a gap. Once loaded, the live stream keeps it current.
  const historyOptions = { enabled: historyReady, staleTime: Infinity, gcTime: 0 };
  const names = useQuery(trpc.run.metricNames.queryOptions({ runId }, historyOptions));
  const storedNames = storedMetricNames(names.data?.series);
  const metrics = useQuery(
    trpc.run.metrics.queryOptions(
      // The same input as the server's prefetch (prefetchRunPage), so the prefetched series are found.
      metricsQueryInput(runId, storedNames, request.maxPoints, request.zoom),
      // A new width or zoom keeps the old points on screen until the new ones arrive.
      { ...historyOptions, enabled: historyReady && names.isSuccess, placeholderData: (prev) => prev, select: selectMetricSeries },
    ),
  );
  const memory = useQuery(trpc.run.memory.queryOptions({ runId }, historyOptions));

  // The runner may stream a terminal event a moment before it updates the row: show the one further along.
  const status = furthest(live.lastStatus?.state, run.data?.status);
  const ended = status !== undefined && isTerminal(status);

  const refreshRun = () => void refetchAfterWrite(queryClient, { queryKey: trpc.run.byId.queryKey({ runId }) });

  const { connected } = useRunEvents(runId, {
    after: liveFrom,
    enabled: historyReady && !ended,
    onEvents: (events: RunEvent[]) => {
      if (live.apply(events)) setVersion((v) => v + 1);
      if (events.some((e) => e.type === "status")) {
        refreshRun();
        // The row catches up with a terminal event a moment later (finishedAt, error, log tail).
        if (events.some((e) => e.type === "status" && isTerminal(e.state))) [1000, 3000].forEach((ms) => setTimeout(refreshRun, ms));
        void refetchAfterWrite(queryClient, { queryKey: trpc.run.logs.queryKey() });
        void refetchAfterWrite(queryClient, { queryKey: trpc.run.episodes.queryKey() });
        void refetchAfterWrite(queryClient, { queryKey: trpc.run.memoryPeaks.queryKey() });
      }
    },
    onClosed: refreshRun,
  });

  const allNames = [...new Set([...storedNames, ...live.names()])];
  const charts = useRunCharts(metrics.data, memory.data?.series, live, version);
  return {
    run,
    status,
    ended,
    connected,
    charts,
    live,
    version,
    names: allNames,
    metrics: metrics.data,
    memorySeries: memory.data?.series,
    episodesSeen: live.episodesSeen,
    historyError: metrics.error ?? memory.error ?? names.error,
  };
}
