"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { useTRPC } from "../../../trpc/react";
import { EloChart } from "./EloChart";

/**
 * Elo per checkpoint of each actor (gpu-runtime troupe/ratings), in the Games section beside win/draw/loss.
 * Read again when live metrics arrive (`version`) and once when the run ends; nothing when the run has no ratings.
 */
export function EloPanel({ runId, actors, live, version }: { runId: string; actors: readonly string[]; live: boolean; version: number }) {
  const trpc = useTRPC();
  const ratings = useQuery(trpc.ratings.ofRun.queryOptions({ runId }));
  const { refetch } = ratings;
  useEffect(() => {
    void refetch();
  }, [refetch, version, live]);
  const pools = ratings.data?.pools ?? [];
  if (pools.length === 0) return null;
  return (
    <>
      {pools.map((pool) => (
        <EloChart key={pool.environment ?? ""} pool={pool} actors={actors} />
      ))}
    </>
  );
}
