"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { StatusBadge } from "../../../components/StatusBadge";
import { formatMetric, formatRelative, runDuration } from "../../../lib/format";
import { useNow } from "../../../lib/useNow";
import { stableDateTime, useHydrated } from "../../../lib/useHydrated";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { AdvisoryBadge } from "../../advisories/components/AdvisoryBadge";
import { useAdvisorySummaries } from "../../advisories/hooks/useAdvisorySummaries";

/** Recent runs, newest first; refreshes every few seconds so statuses and steps move. */
export function RunsTable({ experimentId, pageSize = 15 }: { experimentId?: string; pageSize?: number }) {
  const trpc = useTRPC();
  const now = useNow(1000);
  const hydrated = useHydrated(); // no browser clock or time zone in server-rendered text (React error #418)
  const runs = useInfiniteQuery(
    trpc.run.list.infiniteQueryOptions(
      { limit: pageSize, ...(experimentId ? { experimentId } : {}) },
      { getNextPageParam: (page) => page.nextCursor, refetchInterval: 3000 },
    ),
  );
  const advisories = useAdvisorySummaries(runs.data?.pages.flatMap((p) => p.items.map((r) => r.id)) ?? []);

  if (runs.isPending) return <p className="muted">Loading runs…</p>;
  if (runs.isError) return <div className="form-error">Could not load runs: {errorMessage(runs.error)}</div>;
  const items = runs.data.pages.flatMap((p) => p.items);
  // On an experiment's own page the experiment column would say the same thing on every row.
  const showExperiment = experimentId === undefined;
  if (items.length === 0) {
    return (
      <div className="panel empty" data-testid="runs-empty">
        No runs yet. Launch one from an experiment above.
      </div>
    );
  }
  return (
    <>
      <table className="table" data-testid="runs-table">
        <thead>
          <tr>
            <th>Status</th>
            <th>Run</th>
            {showExperiment && <th>Experiment</th>}
            <th>Created</th>
            <th>Duration</th>
            <th>Step</th>
            <th>Last reward</th>
          </tr>
        </thead>
        <tbody>
          {items.map((run) => (
            <tr key={run.id} data-testid="run-row" data-run-id={run.id}>
              <td>
                <StatusBadge status={run.status} />
                <AdvisoryBadge summary={advisories.get(run.id)} />
              </td>
              <td>
                <Link href={`/runs/${run.id}`} data-testid="run-name">
                  {run.name}
                </Link>
                <div className="muted small">
                  {run.specName} <code title={run.id}>#{run.id.slice(-5)}</code>
                </div>
              </td>
              {showExperiment && (
                <td>
                  {run.experimentId ? (
                    <Link href={`/experiments/${run.experimentId}`}>{run.experimentName}</Link>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              )}
              <td title={hydrated ? run.createdAt.toLocaleString() : stableDateTime(run.createdAt)}>{hydrated ? formatRelative(run.createdAt, now) : stableDateTime(run.createdAt)}</td>
              <td className="num">{hydrated || run.finishedAt ? runDuration(run, now) : "—"}</td>
              <td className="num">
                {run.lastStep ?? 0}
                {run.totalSteps !== null && <span className="muted"> / {run.totalSteps}</span>}
              </td>
              <td className="num">{formatMetric(run.lastReward)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {runs.hasNextPage && (
        <div className="table-foot">
          <button type="button" className="secondary" onClick={() => void runs.fetchNextPage()} disabled={runs.isFetchingNextPage}>
            {runs.isFetchingNextPage ? "Loading…" : "Load more"}
          </button>
        </div>
      )}
    </>
  );
}
