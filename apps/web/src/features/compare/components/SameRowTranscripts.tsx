"use client";

import { useQueries, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "../../../trpc/react";
import { TranscriptView } from "../../runs/components/TranscriptView";
import { specNames } from "../../runs/lib/specNames";

/** The same dataset row (prompt) in each run, side by side: its latest transcript per run, at a step or the newest. */
export function SameRowTranscripts({ runs }: { runs: { id: string; name: string; colour: string; spec: unknown }[] }) {
  const trpc = useTRPC();
  const [chosenRow, setRow] = useState<number | null>(null);
  const [step, setStep] = useState<number | undefined>(undefined);
  // Until a row is chosen, show the prompt of the first run's newest transcript (row 0 may not exist).
  const newest = useQuery(trpc.run.transcripts.queryOptions({ runId: runs[0]!.id, limit: 1 }, { enabled: chosenRow === null }));
  const row = chosenRow ?? newest.data?.items[0]?.datasetRow ?? 0;
  const ready = chosenRow !== null || !newest.isPending;
  const results = useQueries({
    queries: runs.map((r) =>
      trpc.run.transcripts.queryOptions({ runId: r.id, datasetRow: row, limit: 1, ...(step !== undefined ? { step } : {}) }, { enabled: ready }),
    ),
  });
  return (
    <section className="panel" data-testid="compare-transcripts">
      <div className="toolbar">
        <h2 style={{ margin: 0 }}>Same prompt</h2>
        <label>
          dataset row
          <input type="number" min={0} style={{ width: "5rem" }} value={row} onChange={(e) => setRow(Math.max(0, Number(e.target.value) || 0))} data-testid="compare-row" />
        </label>
        <label>
          step
          <input type="number" min={0} style={{ width: "5rem" }} placeholder="latest" value={step ?? ""} onChange={(e) => setStep(e.target.value === "" ? undefined : Number(e.target.value))} />
        </label>
      </div>
      <div className="compare-cols">
        {runs.map((r, i) => {
          const episode = results[i]?.data?.items[0];
          return (
            <div key={r.id} style={{ borderTop: `3px solid ${r.colour}`, paddingTop: "0.4rem" }}>
              <div style={{ marginBottom: "0.3rem" }}>
                <Link href={`/runs/${r.id}?tab=transcripts`}>{r.name}</Link>
              </div>
              {episode ? (
                <TranscriptView episode={episode} actors={specNames(r.spec).actors} />
              ) : (
                <p className="muted small">{results[i]?.isPending ? "Loading…" : "No transcript of this row."}</p>
              )}
            </div>
          );
        })}
      </div>
    </section>
  );
}
