import type { InvalidateQueryFilters, QueryClient } from "@tanstack/react-query";

/**
 * Refetches what a write (or a live event) changed. `invalidateQueries` alone is not enough: a query whose
 * first load is still in flight has no data yet, and react-query then joins that running fetch instead of
 * starting a new one, so a list first requested before the write answers without it and stays so (a token
 * created while the token list was still loading never appeared). Cancelling first makes the refetch a new
 * request, sent after the write.
 */
export async function refetchAfterWrite(queryClient: QueryClient, filters: InvalidateQueryFilters): Promise<void> {
  await queryClient.cancelQueries(filters);
  await queryClient.invalidateQueries(filters);
}
