"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import type { RunAdvisory } from "@troupe/contracts";
import { formatMetric } from "../../../lib/format";
import { useTRPC } from "../../../trpc/react";
import { transcriptsHref } from "../../runs/lib/transcriptLink";
import { ADVISORY_TITLES } from "../lib/labels";

/**
 * The run page's health advisories: what the runtime's checks raised (collapse, KL blow-up, …), each with
 * its evidence, what to try, and links to the transcripts that show it. Nothing is shown for a healthy run.
 */
export function AdvisoriesPanel({ runId, live }: { runId: string; live: boolean }) {
  const trpc = useTRPC();
  const advisories = useQuery(trpc.advisory.ofRun.queryOptions({ runId }, { refetchInterval: live ? 5000 : false }));
  // Once more when the run ends: what its last steps raised came after the last poll.
  const { refetch } = advisories;
  useEffect(() => {
    if (!live) void refetch();
  }, [live, refetch]);
  const items = advisories.data ?? [];
  if (items.length === 0) return null;
  return (
    <section className="panel advisories" data-testid="advisories" aria-label="Health advisories">
      <h3 style={{ marginTop: 0 }}>
        Health advisories <span className="muted small">({items.length})</span>
      </h3>
      <ul>
        {items.map((a) => (
          <AdvisoryItem key={a.seq} runId={runId} advisory={a} />
        ))}
      </ul>
    </section>
  );
}

function AdvisoryItem({ runId, advisory: a }: { runId: string; advisory: RunAdvisory }) {
  const ev = a.evidence;
  const range = transcriptsHref(runId, { fromStep: ev.fromStep, toStep: ev.toStep, ...(a.actor ? { actor: a.actor } : {}) });
  return (
    <li className="advisory" data-testid="advisory" data-kind={a.kind} data-severity={a.severity}>
      <div>
        <span className={`badge badge-advisory-${a.severity}`}>{a.severity}</span> <b>{ADVISORY_TITLES[a.kind]}</b>
        {a.actor && <> · {a.actor}</>} <span className="muted small">at step {a.step}</span>
      </div>
      <p style={{ margin: "0.3rem 0" }} data-testid="advisory-summary">
        {ev.summary}
      </p>
      <p style={{ margin: "0.3rem 0" }}>
        <b>Try:</b> {a.hint}
      </p>
      {ev.examples.length > 0 && (
        <div className="small">
          Examples:{" "}
          {ev.examples.map((x, i) => (
            <code key={i} style={{ marginRight: "0.5rem" }}>
              {x}
            </code>
          ))}
        </div>
      )}
      <div className="links small">
        <a href={range} data-testid="advisory-transcripts">
          Transcripts of steps {ev.fromStep}–{ev.toStep}
          {a.actor ? ` (${a.actor})` : ""}
        </a>
        {ev.episodes.slice(0, 8).map((e) => (
          <a key={`${e.step}-${e.environment ?? ""}-${e.group}-${e.sample ?? ""}`} href={transcriptsHref(runId, { step: e.step, group: e.group, ...(e.environment ? { environment: e.environment } : {}) })}>
            step {e.step} group {e.group}
            {e.sample !== undefined ? ` sample ${e.sample}` : ""}
          </a>
        ))}
      </div>
      {Object.keys(ev.values).length > 0 && (
        <details className="small">
          <summary>Numbers</summary>
          <table className="table">
            <tbody>
              {Object.entries(ev.values).map(([k, v]) => (
                <tr key={k}>
                  <td>{k}</td>
                  <td className="num">{formatMetric(v)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </li>
  );
}
