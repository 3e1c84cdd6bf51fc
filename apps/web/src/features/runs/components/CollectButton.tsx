"use client";

import { useMutation } from "@tanstack/react-query";
import { isTerminal, type RunState } from "@troupe/contracts";
import Link from "next/link";
import { useState } from "react";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { useRoleRefusal } from "../../auth/components/CurrentUser";

/**
 * "Collect": the run's recorded episodes at or above a reward threshold become a dataset in the library
 * (prompt / completion columns), for an SFT run that starts a pipeline. Only a finished run can be collected.
 */
export function CollectButton({ runId, status, storedStatus, runName }: { runId: string; status: RunState; storedStatus: RunState; runName: string }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(() => `${runName.replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^[^A-Za-z_]+/, "").slice(0, 40) || "run"}_collected`);
  const [minReward, setMinReward] = useState("0.5");
  const collect = useMutation(trpc.run.collect.mutationOptions());
  // The stream reports the end before the runner has settled the row (its process is still exiting); the server
  // collects from the row's status, so wait for both.
  const finished = isTerminal(status) && isTerminal(storedStatus);
  const refused = useRoleRefusal("run.collect");
  const why = refused ?? (!isTerminal(status) ? "only a finished run can be collected" : !finished ? "waiting for the runner to finish the run…" : null);
  const threshold = Number(minReward);
  return (
    <div className="collect">
      <button
        type="button"
        className="secondary"
        onClick={() => setOpen(!open)}
        disabled={!finished || refused !== null}
        title={why ?? "Save the episodes at or above a reward as a dataset (prompt / completion)"}
        data-testid="run-collect"
      >
        Collect…
      </button>
      {why && !refused && <span className="hint"> {why}</span>}
      {open && finished && !refused && (
        <form
          className="collect-form"
          onSubmit={(e) => {
            e.preventDefault();
            collect.mutate({ runId, name, minReward: threshold });
          }}
        >
          <label>
            Dataset name
            <input value={name} onChange={(e) => setName(e.target.value)} data-testid="collect-name" />
          </label>
          <label>
            Keep episodes with reward ≥
            <input value={minReward} onChange={(e) => setMinReward(e.target.value)} inputMode="decimal" data-testid="collect-min-reward" />
          </label>
          <button type="submit" disabled={collect.isPending || !Number.isFinite(threshold) || minReward.trim() === ""} data-testid="collect-submit">
            {collect.isPending ? "Collecting…" : "Save dataset"}
          </button>
          {collect.error && (
            <div className="field-error" role="alert">
              {errorMessage(collect.error)}
            </div>
          )}
          {collect.data && (
            <div role="status" data-testid="collect-result">
              Saved <Link href="/designer/datasets">{collect.data.dataset.name}</Link>: {collect.data.dataset.rowCount} rows from {collect.data.episodesScanned}{" "}
              recorded episodes ({collect.data.actors.map((a) => `${a.actor} ${a.kept}/${a.scanned}`).join(", ")}).
            </div>
          )}
        </form>
      )}
    </div>
  );
}

/** Actors of this run that started from another run's checkpoint, read from its frozen spec. */
export function startedFrom(spec: unknown): { actor: string; runId: string; step: number; fromActor: string }[] {
  const actors = (spec as { actors?: { name?: string; model?: { source?: string; runId?: string; step?: number; actor?: string } }[] })?.actors ?? [];
  return actors.flatMap((a) =>
    a.model?.source === "run" && typeof a.model.runId === "string" && typeof a.model.step === "number" && typeof a.name === "string"
      ? [{ actor: a.name, runId: a.model.runId, step: a.model.step, fromActor: a.model.actor ?? a.name }]
      : [],
  );
}
