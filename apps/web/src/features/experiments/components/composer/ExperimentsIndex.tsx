"use client";

import { DEMO_SPEC_INPUT, DESIGNER_TEMPLATES, SPEC_VERSION } from "@troupe/contracts";
import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { errorMessage } from "../../../../trpc/errors";
import "./composer.css";
import { useTRPC } from "../../../../trpc/react";

const BLANK = {
  specVersion: SPEC_VERSION,
  name: "New experiment",
  actors: [],
  datasets: [],
  rewards: [],
  environments: [],
  algorithm: { name: "grpo", groupSize: 8 },
  trainer: { steps: 100, promptsPerStep: 4 },
};

/** The experiments: open one in the composer, start a blank one, one from the demo or one from a template. */
export function ExperimentsIndex() {
  const trpc = useTRPC();
  const router = useRouter();
  const list = useQuery(trpc.experiment.list.queryOptions({ limit: 100 }));
  const create = useMutation(
    trpc.experiment.create.mutationOptions({ onSuccess: ({ id }) => router.push(`/designer/experiments/${id}`) }),
  );
  return (
    <div>
      <div className="form-actions" style={{ marginBottom: "1rem" }}>
        <button type="button" onClick={() => create.mutate({ spec: BLANK })} disabled={create.isPending} data-testid="experiment-new">
          + New experiment
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => create.mutate({ spec: { ...structuredClone(DEMO_SPEC_INPUT), name: "Copy of the demo", tags: [] } as Record<string, unknown> })}
          disabled={create.isPending}
        >
          Start from the demo
        </button>
        <span className="muted small">Import a YAML or JSON spec from inside an experiment (Import…).</span>
      </div>
      <div className="form-actions" style={{ marginBottom: "1rem" }} role="group" aria-labelledby="templates-label">
        <span className="label" id="templates-label">
          Start from a template:
        </span>
        {DESIGNER_TEMPLATES.map((t) => (
          <button
            key={t.id}
            type="button"
            className="secondary"
            title={t.note}
            data-testid={`template-${t.id}`}
            onClick={() => create.mutate({ spec: structuredClone(t.spec) as Record<string, unknown> })}
            disabled={create.isPending}
          >
            {t.label}
          </button>
        ))}
      </div>
      {create.error && <div className="form-error">{errorMessage(create.error)}</div>}
      {list.isPending && <p className="muted">Loading…</p>}
      <table className="table" data-testid="experiments-table">
        <thead>
          <tr>
            <th>name</th>
            <th>actors</th>
            <th>algorithm</th>
            <th>runs</th>
            <th>state</th>
            <th>edited</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.items ?? []).map((e) => (
            <tr key={e.id}>
              <td>
                <Link href={`/designer/experiments/${e.id}`}>{e.name}</Link>
              </td>
              <td>{e.summary ? e.summary.actors.map((a) => a.name).join(", ") : "—"}</td>
              <td>{e.summary ? `${e.summary.algorithm} × ${e.summary.groupSize}, ${e.summary.steps} steps` : "—"}</td>
              <td>
                <Link href={`/experiments/${e.id}`}>{e.runCount}</Link>
              </td>
              <td>{e.specError ? <span className="draft-note" title={e.specError}>draft (not valid yet)</span> : "ready"}</td>
              <td className="muted small">{e.updatedAt.toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
