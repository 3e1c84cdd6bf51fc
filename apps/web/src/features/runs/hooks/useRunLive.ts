"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { isTerminal, type RunEvent } from "@troupe/contracts";
import { useRef, useState } from "react";
import { useTRPC } from "../../../trpc/react";
import { furthest, LiveRunData } from "../../live/liveRunData";
import { useRunEvents } from "../../live/hooks/useRunEvents";
import { useRunCharts } from "./useRunCharts";

const CHART_METRICS = ["reward/mean", "reward/std", "loss"];

/**
 * Everything the run page shows that moves: the run row, chart history (tRPC) and live events (SSE).
 *
 * Order matters for "no point lost": the live stream resumes after the `lastSeq` of the first run
 * load, and the chart history is fetched only after that load, so it holds at least every event up
 * to that seq (a run's rows and its lastSeq are written in one transaction). Points in both are
 * keyed and drawn once.
 */
export function useRunLive(runId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const run = useQuery(
    trpc.run.byId.queryOptions(
      { runId },
      {
        retry: false,
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
  const metrics = useQuery(trpc.run.metrics.queryOptions({ runId, names: CHART_METRICS }, historyOptions));
  const memory = useQuery(trpc.run.memory.queryOptions({ runId }, historyOptions));

  // The runner may stream a terminal event a moment before it updates the row: show the one further along.
  const status = furthest(live.lastStatus?.state, run.data?.status);
  const ended = status !== undefined && isTerminal(status);

  const refreshRun = () => void queryClient.invalidateQueries({ queryKey: trpc.run.byId.queryKey({ runId }) });

  const { connected } = useRunEvents(runId, {
    after: liveFrom,
    enabled: historyReady && !ended,
    onEvents: (events: RunEvent[]) => {
      if (live.apply(events)) setVersion((v) => v + 1);
      if (events.some((e) => e.type === "status")) {
        refreshRun();
        void queryClient.invalidateQueries({ queryKey: trpc.run.logs.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.run.episodes.queryKey() });
      }
    },
    onClosed: refreshRun,
  });

  const charts = useRunCharts(metrics.data?.series, memory.data?.series, live, version);
  return { run, status, ended, connected, charts, episodesSeen: live.episodesSeen, historyError: metrics.error ?? memory.error };
}
