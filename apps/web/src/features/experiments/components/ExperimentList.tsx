"use client";

import { useQuery } from "@tanstack/react-query";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { ExperimentCard } from "./ExperimentCard";

export function ExperimentList() {
  const trpc = useTRPC();
  const experiments = useQuery(trpc.experiment.list.queryOptions({}));

  if (experiments.isPending) return <p className="muted">Loading experiments…</p>;
  if (experiments.isError) return <div className="form-error">Could not load experiments: {errorMessage(experiments.error)}</div>;
  if (experiments.data.items.length === 0) {
    return (
      <div className="panel empty" data-testid="experiments-empty">
        <p>
          <b>No experiments yet.</b>
        </p>
        <p>
          Create the demo experiment (a tiny model that learns to echo a letter on CPU) with{" "}
          <code>npm run -w @troupe/db seed</code>, then reload this page.
        </p>
      </div>
    );
  }
  return (
    <div className="grid-cards">
      {experiments.data.items.map((e) => (
        <ExperimentCard key={e.id} experiment={e} />
      ))}
    </div>
  );
}
