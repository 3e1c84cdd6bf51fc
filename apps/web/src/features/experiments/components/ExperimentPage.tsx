"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { RunsTable } from "../../runs/components/RunsTable";
import { LaunchForm } from "./LaunchForm";
import { LaunchOpenButton } from "./LaunchOpenButton";
import { DescriptionText } from "./DescriptionText";

export function ExperimentPage({ experimentId }: { experimentId: string }) {
  const trpc = useTRPC();
  const [launching, setLaunching] = useState(false);
  const experiment = useQuery(trpc.experiment.byId.queryOptions({ id: experimentId }, { retry: false }));
  if (experiment.isPending) return <p className="muted">Loading experiment…</p>;
  if (experiment.isError) {
    return (
      <div className="panel empty">
        <p>
          <b>
            {experiment.error.data?.code === "NOT_FOUND"
              ? "Experiment not found."
              : `Could not load the experiment: ${errorMessage(experiment.error)}`}
          </b>
        </p>
        <Link href="/">Back to the dashboard</Link>
      </div>
    );
  }
  const e = experiment.data;
  return (
    <>
      <section className="section">
        <div className="run-title">
          <h1>{e.name}</h1>
          {e.isDemo && <span className="badge badge-demo">demo</span>}
          <Link href={`/designer/experiments/${e.id}`} className="small" data-testid="experiment-compose">
            Edit in the composer
          </Link>
        </div>
        {e.description && <p className="muted"><DescriptionText text={e.description} /></p>}
        {e.specError && <div className="form-error">This experiment&apos;s spec does not validate: {e.specError}</div>}
        <div className="panel" style={{ maxWidth: 640 }}>
          {launching ? (
            <LaunchForm
              experimentId={e.id}
              defaultSteps={e.summary?.steps ?? null}
              defaultSeed={e.summary?.seed ?? null}
              onCancel={() => setLaunching(false)}
            />
          ) : (
            <LaunchOpenButton onOpen={() => setLaunching(true)} label="Launch a run" />
          )}
        </div>
      </section>
      <section className="section">
        <h2>Runs</h2>
        <RunsTable experimentId={e.id} />
      </section>
      <section className="panel">
        <details open>
          <summary>Spec</summary>
          <pre className="spec">{JSON.stringify(e.spec, null, 2)}</pre>
        </details>
      </section>
    </>
  );
}
