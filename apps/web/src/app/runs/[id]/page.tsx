import { HydrationBoundary } from "@tanstack/react-query";
import { cookies } from "next/headers";
import { Suspense } from "react";
import { RunPage } from "../../../features/runs/components/RunPage";
import { CHART_POINTS_COOKIE, chartPointsFromCookie } from "../../../features/runs/lib/seriesRequest";
import { prefetchRunPage } from "../../../features/runs/server/prefetchRunPage";

type SearchParams = Record<string, string | string[] | undefined>;

export default async function RunRoute(props: { params: Promise<{ id: string }>; searchParams: Promise<SearchParams> }) {
  const { id } = await props.params;
  // The header streams at once; the run's data follows as soon as the server has read it.
  return (
    <Suspense fallback={<p className="muted">Loading run…</p>}>
      <PrefetchedRunPage runId={id} searchParams={props.searchParams} />
    </Suspense>
  );
}

async function PrefetchedRunPage({ runId, searchParams }: { runId: string; searchParams: Promise<SearchParams> }) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(await searchParams)) if (typeof value === "string") search.set(key, value);
  const chartPoints = chartPointsFromCookie((await cookies()).get(CHART_POINTS_COOKIE)?.value);
  const state = await prefetchRunPage(runId, search, chartPoints);
  // RunPage reads its view (tab, zoom, chart options) from the query string.
  return (
    <HydrationBoundary state={state}>
      <RunPage runId={runId} initialChartPoints={chartPoints} />
    </HydrationBoundary>
  );
}
