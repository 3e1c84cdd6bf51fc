"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { formatMetric } from "../../../lib/format";
import { useTRPC } from "../../../trpc/react";

const REFRESH_MS = 1500;

/**
 * Recent episodes (transcripts) of a step. Model output is untrusted: it is rendered as text
 * nodes only (React escapes it), never as HTML.
 */
export function EpisodesPanel({ runId, live, episodesSeen }: { runId: string; live: boolean; episodesSeen: number }) {
  const trpc = useTRPC();
  const [step, setStep] = useState<number | undefined>(undefined);
  const episodes = useQuery(
    trpc.run.episodes.queryOptions(
      { runId, ...(step !== undefined ? { step } : {}), limit: 12 },
      // Live updates come from the effect below; the interval is a fallback should the stream stall.
      { refetchInterval: live && step === undefined ? 10_000 : false, placeholderData: (prev) => prev },
    ),
  );
  const data = episodes.data;

  // New episodes arrived live: refresh the latest step's, at most every REFRESH_MS.
  const lastRefresh = useRef(0);
  const { refetch } = episodes;
  useEffect(() => {
    if (episodesSeen === 0 || step !== undefined) return;
    const wait = Math.max(0, lastRefresh.current + REFRESH_MS - Date.now());
    const timer = setTimeout(() => {
      lastRefresh.current = Date.now();
      void refetch();
    }, wait);
    return () => clearTimeout(timer);
  }, [episodesSeen, step, refetch]);

  return (
    <section className="panel" data-testid="run-episodes" data-episodes-seen={episodesSeen}>
      <div className="section-head" style={{ marginBottom: "0.5rem" }}>
        <h2 style={{ margin: 0 }}>Episodes {data?.step !== null && data?.step !== undefined ? `(step ${data.step})` : ""}</h2>
        {data && data.recentSteps.length > 0 && (
          <label className="small muted">
            Step{" "}
            <select
              value={step === undefined ? "" : String(step)}
              onChange={(e) => setStep(e.target.value === "" ? undefined : Number(e.target.value))}
            >
              <option value="">latest</option>
              {data.recentSteps.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {!data ? (
        <p className="muted">Loading…</p>
      ) : data.episodes.length === 0 ? (
        <p className="muted">No episodes recorded yet.</p>
      ) : (
        <div className="episodes">
          {data.episodes.map((e) => (
            <article className="episode" key={e.seq}>
              <div className="episode-head">
                <span>
                  <b>{e.environment}</b> · group {e.group} · sample {e.sample}
                  {e.datasetRow !== null && ` · row ${e.datasetRow}`}
                </span>
                <span>
                  reward <b>{formatMetric(e.reward)}</b>
                </span>
                {e.advantage !== null && <span>advantage {formatMetric(e.advantage)}</span>}
                {Object.entries(e.rewardComponents).map(([k, v]) => (
                  <span key={k}>
                    {k} {formatMetric(v)}
                  </span>
                ))}
              </div>
              {e.messages.map((m, i) => (
                <div key={i} className={`message${m.trained ? " trained" : ""}`}>
                  <span className="who">
                    {m.actor} · {m.role}
                    {m.trained ? " · trained" : ""}
                  </span>
                  <span className="content">{m.content === "" ? "(empty)" : m.content}</span>
                </div>
              ))}
            </article>
          ))}
        </div>
      )}
    </section>
  );
}
