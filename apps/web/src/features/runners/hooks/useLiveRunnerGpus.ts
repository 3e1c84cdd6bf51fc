"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useTRPC } from "../../../trpc/react";
import { offerHasCuda } from "../../runs/lib/memoryTarget";

/** Whether each live runner has a CUDA GPU (runner.support, shared with the designer's checks); undefined while loading. */
export function useLiveRunnerGpus(): { cuda: boolean }[] | undefined {
  const trpc = useTRPC();
  const support = useQuery({ ...trpc.runner.support.queryOptions(), refetchInterval: 10_000 });
  const offers = support.data?.offers;
  return useMemo(() => offers?.map((o) => ({ cuda: offerHasCuda(o) })), [offers]);
}
