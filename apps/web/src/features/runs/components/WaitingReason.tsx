"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "../../../trpc/react";

/** A queued run says why it still waits (the reason /runners gives), asked again every few seconds. */
export function WaitingReason({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const why = useQuery(trpc.runner.whyWaiting.queryOptions({ runId }, { refetchInterval: 5_000 }));
  if (!why.data?.reason) return null;
  return (
    <p className="muted" data-testid="run-waiting-reason" style={{ margin: "0.4rem 0 0" }}>
      <b>Waiting:</b> {why.data.reason} (<Link href="/runners">runners</Link>)
    </p>
  );
}
