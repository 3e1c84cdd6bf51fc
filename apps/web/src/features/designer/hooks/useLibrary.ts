"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useTRPC } from "../../../trpc/react";
import { BUILTIN_DATASETS, BUILTIN_REWARDS } from "../lib/builtins";

export interface LibraryDataset {
  /** Null for a built-in dataset. */
  id: string | null;
  name: string;
  columns: string[];
  /** The RunSpec `datasets[]` entry. */
  spec: Record<string, unknown>;
  builtinRows: Record<string, unknown>[] | null;
}

/** Everything the environment editor and the composer pick from: library parts, uploaded datasets and the built-ins. */
export function useLibrary() {
  const trpc = useTRPC();
  const actors = useQuery(trpc.part.list.queryOptions({ kind: "actor" }));
  const rewards = useQuery(trpc.part.list.queryOptions({ kind: "reward" }));
  const environments = useQuery(trpc.part.list.queryOptions({ kind: "environment" }));
  const datasets = useQuery(trpc.dataset.list.queryOptions());

  const allDatasets: LibraryDataset[] = useMemo(
    () => [
      ...(datasets.data?.items ?? []).map((d) => ({ id: d.id, name: d.name, columns: d.columns, spec: d.spec as Record<string, unknown>, builtinRows: null })),
      ...BUILTIN_DATASETS.filter((b) => !(datasets.data?.items ?? []).some((d) => d.name === b.spec.name)).map((b) => ({
        id: null,
        name: b.spec.name,
        columns: b.columns,
        spec: b.spec as Record<string, unknown>,
        builtinRows: b.sampleRows,
      })),
    ],
    [datasets.data],
  );
  const allRewards = useMemo(
    () => [
      ...(rewards.data?.items ?? []).map((r) => ({ name: r.name, spec: r.spec, builtin: false })),
      ...BUILTIN_REWARDS.filter((b) => !(rewards.data?.items ?? []).some((r) => r.name === b.name)).map((b) => ({
        name: b.name,
        spec: b as Record<string, unknown>,
        builtin: true,
      })),
    ],
    [rewards.data],
  );
  return {
    actors: actors.data?.items ?? [],
    rewards: allRewards,
    environments: environments.data?.items ?? [],
    datasets: allDatasets,
    loading: actors.isPending || rewards.isPending || environments.isPending || datasets.isPending,
    error: actors.error ?? rewards.error ?? environments.error ?? datasets.error,
  };
}
