"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { useRunLive } from "../hooks/useRunLive";
import { LossChart } from "./charts/LossChart";
import { MemoryChart } from "./charts/MemoryChart";
import { RewardChart } from "./charts/RewardChart";
import { EpisodesPanel } from "./EpisodesPanel";
import { LogPanel } from "./LogPanel";
import { RunErrorPanel } from "./RunErrorPanel";
import { RunHeader } from "./RunHeader";
import { SpecPanel } from "./SpecPanel";

export function RunPage({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const { run, status, ended, connected, charts, episodesSeen, historyError } = useRunLive(runId);
  const logs = useQuery(
    trpc.run.logs.queryOptions({ runId, limit: 200 }, { enabled: run.isSuccess, refetchInterval: ended ? false : 2000 }),
  );

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
  const lines = logs.data?.lines ?? [];
  const fallbackTail = lines.length > 0 ? lines.slice(-40).map((l) => l.text).join("\n") : null;

  return (
    <>
      <RunHeader run={data} status={status ?? data.status} connected={connected} latest={charts.reward[0]?.points.at(-1)} />
      {status === "failed" && <RunErrorPanel run={data} fallbackLog={fallbackTail} />}
      {status === "cancelled" && data.error && (
        <div className="panel small" style={{ marginBottom: "1rem" }}>
          <b>Cancelled:</b> {data.error}
        </div>
      )}
      {historyError && <div className="form-error">Could not load chart history: {errorMessage(historyError)}</div>}
      <div className="charts">
        <RewardChart series={charts.reward} />
        <LossChart series={charts.loss} />
        <MemoryChart data={charts.memory} />
      </div>
      <div className="two-col">
        <LogPanel lines={lines} loading={logs.isPending} />
        <EpisodesPanel runId={runId} live={!ended} episodesSeen={episodesSeen} />
      </div>
      <SpecPanel spec={data.spec} />
    </>
  );
}
