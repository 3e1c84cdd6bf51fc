"use client";

import { useQuery } from "@tanstack/react-query";
import type { RunAdvisorySummary } from "@troupe/contracts";
import { useTRPC } from "../../../trpc/react";

/** The advisories of a table page's runs, by run id (one query per page; refreshed while runs train). */
export function useAdvisorySummaries(runIds: string[]): Map<string, RunAdvisorySummary> {
  const trpc = useTRPC();
  const ids = runIds.slice(0, 200);
  const query = useQuery(trpc.advisory.summaries.queryOptions({ runIds: ids }, { enabled: ids.length > 0, refetchInterval: 10_000 }));
  return new Map((query.data ?? []).map((s) => [s.runId, s]));
}
