import { dehydrate, type DehydratedState } from "@tanstack/react-query";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { createServerComponentContext } from "../../../server/api/context";
import { appRouter } from "../../../server/api/root";
import type { TRPCContext } from "../../../server/api/trpc";
import { makeQueryClient } from "../../../trpc/queryClient";
import { parseRunView, RUN_TABS } from "../lib/runView";
import { metricsQueryInput, storedMetricNames } from "../lib/seriesRequest";

/**
 * The run page's first data, read while the server renders it: the run row, its metric names and
 * every chart's bucketed series. The browser would otherwise ask for them one after another after
 * its JavaScript has loaded (three round trips before the first chart).
 *
 * The row is read first: its `lastSeq` is where the live stream resumes, and history read after it
 * (the names too: a series first reported between a names read and the row's would be missed by
 * both) holds at least every event up to that seq, the order the browser keeps when it fetches them
 * itself. A failed read is left out; the browser retries it and shows the error.
 */
export async function prefetchRunPage(
  runId: string,
  search: URLSearchParams,
  chartPoints: number,
  // The page's request: the same sign-in and role checks as the browser's own calls (tests pass theirs).
  context: () => Promise<TRPCContext> | TRPCContext = createServerComponentContext,
): Promise<DehydratedState> {
  const queryClient = makeQueryClient();
  const trpc = createTRPCOptionsProxy({ router: appRouter, ctx: context, queryClient });
  await queryClient.prefetchQuery(trpc.run.byId.queryOptions({ runId }));
  if (queryClient.getQueryData(trpc.run.byId.queryKey({ runId })) === undefined) return dehydrate(queryClient);

  await queryClient.prefetchQuery(trpc.run.metricNames.queryOptions({ runId }));
  const names = queryClient.getQueryData(trpc.run.metricNames.queryKey({ runId }));
  if (names !== undefined) {
    const { zoom } = parseRunView(search, RUN_TABS);
    await queryClient.prefetchQuery(trpc.run.metrics.queryOptions(metricsQueryInput(runId, storedMetricNames(names.series), chartPoints, zoom)));
  }
  return dehydrate(queryClient);
}
