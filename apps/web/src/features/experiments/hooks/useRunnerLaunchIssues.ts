"use client";

import { useQuery } from "@tanstack/react-query";
import type { RunSpec } from "@troupe/contracts";
import { useMemo } from "react";
import { useTRPC } from "../../../trpc/react";
import { launchIssuesAgainst } from "../../runners/lib/launchIssues";
import { gpusFor } from "../../runs/lib/gpusFor";
import { sectionOf, type SpecIssue } from "../lib/specIssues";

/**
 * The launch's runner check on the composer's valid spec (GPUs on a GPU-less host, vLLM nowhere, …), so a
 * spec that launch would refuse is shown invalid before the click, with the launch's own words. It reads
 * the live runners' offers from runner.support (refreshed every 10 s, shared with useRunnerSupport).
 */
export function useRunnerLaunchIssues(spec: RunSpec | null): SpecIssue[] {
  const trpc = useTRPC();
  const support = useQuery({ ...trpc.runner.support.queryOptions(), refetchInterval: 10_000 });
  const offers = support.data?.offers;
  return useMemo(() => {
    if (!spec || !offers) return [];
    return launchIssuesAgainst(spec, offers, gpusFor(spec)).map((i) => ({ ...i, section: sectionOf(i.path) }));
  }, [spec, offers]);
}
