"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../../trpc/react";
import { unavailableOptions, type UnavailableOptions } from "../lib/runnerSupport";

/** What no live runner can honour now (refreshed every 10 s, as runners come and go). */
export function useRunnerSupport(): UnavailableOptions {
  const trpc = useTRPC();
  const support = useQuery({ ...trpc.runner.support.queryOptions(), refetchInterval: 10_000 });
  return unavailableOptions(support.data);
}
