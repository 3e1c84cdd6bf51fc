"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../../trpc/react";
import { LogPanel } from "./LogPanel";

/** The log tail (live) or, with a search, the newest matching lines (server-side, over the whole log). */
export function LogsTab({ runId, ended }: { runId: string; ended: boolean }) {
  const trpc = useTRPC();
  const [q, setQ] = useState("");
  const search = q.trim();
  const logs = useQuery(
    trpc.run.logs.queryOptions(
      { runId, limit: search ? 500 : 300, ...(search ? { q: search } : {}) },
      { refetchInterval: ended ? false : 2000, placeholderData: (prev) => prev },
    ),
  );
  return (
    <>
      <div className="toolbar">
        <label>
          Search the log
          <input type="search" value={q} onChange={(e) => setQ(e.target.value)} placeholder="text…" data-testid="log-search" />
        </label>
        {search && <span className="muted">{logs.data?.lines.length ?? 0} matching lines (newest 500)</span>}
      </div>
      <LogPanel lines={logs.data?.lines ?? []} loading={logs.isPending} />
    </>
  );
}
