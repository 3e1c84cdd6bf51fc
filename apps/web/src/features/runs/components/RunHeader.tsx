"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { isTerminal, type RunState } from "@troupe/contracts";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { StatusBadge } from "../../../components/StatusBadge";
import { formatDateTime, formatMetric, runDuration } from "../../../lib/format";
import { useNow } from "../../../lib/useNow";
import { stableDateTime, useHydrated } from "../../../lib/useHydrated";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import type { RunDetail } from "../server/schemas";
import { CloneRunButton } from "../../experiments/components/CloneRunButton";
import { RunControls } from "./control/RunControls";
import { CollectButton, startedFrom } from "./CollectButton";
import { confirmCancel } from "../lib/confirmCancel";
import { confirmDelete } from "../lib/confirmDelete";
import { refetchAfterWrite } from "../../../trpc/refetch";
import { WaitingReason } from "./WaitingReason";
import { RewardSummary } from "./RewardSummary";
import { useRoleRefusal } from "../../auth/components/CurrentUser";

export function RunHeader({
  run,
  status,
  connected,
  latest,
  rewards,
}: {
  run: RunDetail;
  status: RunState;
  connected: boolean;
  /** The newest reward point drawn (live), which may be ahead of the loaded run row. */
  latest: { step: number; value: number } | undefined;
  /** reward/mean per actor, as charted: the header shows each smoothed and named. */
  rewards?: { actor: string; points: { step: number; value: number }[] }[];
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const now = useNow(1000);
  // Browser-dependent text (local time zone, the running clock) only after hydration: React error #418.
  const hydrated = useHydrated();
  const when = (date: Date | null) => (date && !hydrated ? stableDateTime(date) : formatDateTime(date));
  const cancel = useMutation(
    trpc.run.cancel.mutationOptions({
      onSettled: () => refetchAfterWrite(queryClient, { queryKey: trpc.run.byId.queryKey({ runId: run.id }) }),
    }),
  );
  const router = useRouter();
  const rerun = useMutation(trpc.run.rerun.mutationOptions({ onSuccess: ({ runId }) => router.push(`/runs/${runId}`) }));
  const remove = useMutation(
    trpc.run.delete.mutationOptions({
      onSuccess: () => {
        void queryClient.invalidateQueries({ queryKey: trpc.run.table.queryKey() });
        router.push("/runs");
      },
    }),
  );
  const rerunRefused = useRoleRefusal("run.rerun");
  const cancelRefused = useRoleRefusal("run.cancel");
  const deleteRefused = useRoleRefusal("run.delete");
  const cancellable = status === "queued" || status === "running" || status === "paused";
  const liveIsNewer = latest !== undefined && latest.step >= (run.lastStep ?? 0);
  const step = liveIsNewer ? latest.step : (run.lastStep ?? 0);
  const lastReward = liveIsNewer ? latest.value : run.lastReward;
  const cancelRequested = (status === "running" || status === "paused") && run.cancelRequestedAt !== null;

  return (
    <header className="run-header">
      <div>
        <div className="run-title">
          <h1 data-testid="run-name">{run.name}</h1>
          <StatusBadge status={status} testId="run-status" />
          {!isTerminal(status) && (
            <span className={`live-dot${connected ? " on" : ""}`} title="live updates">
              {connected ? "live" : "connecting"}
            </span>
          )}
        </div>
        <div className="facts">
          <span>
            <b>spec</b>
            {run.specName}
          </span>
          <span>
            <b>id</b>
            <code>{run.id}</code>
          </span>
          {run.experimentId && (
            <span>
              <b>experiment</b>
              <Link href={`/experiments/${run.experimentId}`}>{run.experimentName}</Link>
            </span>
          )}
          <span>
            <b>step</b>
            {run.totalSteps === 0 ? (
              <span data-testid="run-eval-only" title="trainer.steps is 0: the models are loaded and every environment is evaluated once">
                eval only
              </span>
            ) : (
              <>
                {step}
                {run.totalSteps !== null && ` / ${run.totalSteps}`}
              </>
            )}
          </span>
          <RewardSummary series={rewards ?? []} fallback={lastReward} />
          <span>
            <b>seed</b>
            {run.seed}
          </span>
          <span>
            <b>created</b>
            {when(run.createdAt)}
          </span>
          <span>
            <b>started</b>
            {when(run.startedAt)}
          </span>
          <span data-testid="run-finished">
            <b>finished</b>
            {when(run.finishedAt)}
          </span>
          <span>
            <b>duration</b>
            {hydrated || run.finishedAt ? runDuration(run, now) : "—"}
          </span>
          {startedFrom(run.spec).map((s) => (
            <span key={s.actor} data-testid="run-started-from">
              <b>{s.actor} started from</b>
              <Link href={`/runs/${s.runId}`}>run {s.runId}</Link> step {s.step}
              {s.fromActor !== s.actor && ` (${s.fromActor})`}
            </span>
          ))}
          {run.runnerId && (
            <span>
              <b>runner</b>
              {run.runnerId}
            </span>
          )}
          {run.runnerId && (
            <span data-testid="run-gpus" title="The runner's own GPU indices (as /runners and nvidia-smi number them)">
              <b>{run.gpuIds.length === 1 ? "GPU" : "GPUs"}</b>
              {run.gpuIds.length > 0 ? run.gpuIds.join(", ") : "none (CPU)"}
            </span>
          )}
        </div>
        {status === "queued" && <WaitingReason runId={run.id} />}
      </div>
      <div style={{ textAlign: "right", display: "flex", gap: "0.5rem", alignItems: "flex-start", flexWrap: "wrap", justifyContent: "flex-end" }}>
        <button type="button" className="secondary" onClick={() => rerun.mutate({ runId: run.id })} disabled={rerun.isPending || rerunRefused !== null} data-testid="run-rerun" title={rerunRefused ?? "A new run with this run's frozen spec"}>
          {rerun.isPending ? "Queuing…" : "Re-run"}
        </button>
        <CloneRunButton runId={run.id} />
        <CollectButton runId={run.id} status={status} storedStatus={run.status} runName={run.name} />
        <RunControls runId={run.id} status={status} storedStatus={run.status} />
        <button
          type="button"
          className="danger"
          onClick={() => confirmCancel({ ...run, status }) && cancel.mutate({ runId: run.id })}
          disabled={!cancellable || cancel.isPending || cancelRequested || cancelRefused !== null}
          title={cancelRefused ?? undefined}
          data-testid="run-cancel"
        >
          {cancelRequested ? "Cancelling…" : cancel.isPending ? "Cancelling…" : "Cancel run"}
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => confirmDelete(run) && remove.mutate({ runId: run.id })}
          disabled={!isTerminal(status) || remove.isPending || deleteRefused !== null}
          title={deleteRefused ?? (isTerminal(status) ? "Delete this run and its stored data" : "A queued or running run cannot be deleted: cancel it first")}
          data-testid="run-delete"
        >
          {remove.isPending ? "Deleting…" : "Delete"}
        </button>
        {(rerunRefused ?? deleteRefused) && (
          <div className="hint muted small" data-testid="run-role-note" style={{ flexBasis: "100%" }}>
            {deleteRefused ?? rerunRefused}; re-run, clone and delete are disabled.
          </div>
        )}
        {rerun.error && (
          <div className="field-error" role="alert">
            {errorMessage(rerun.error)}
          </div>
        )}
        {cancel.error && (
          <div className="field-error" role="alert">
            {errorMessage(cancel.error)}
          </div>
        )}
        {remove.error && (
          <div className="field-error" role="alert" data-testid="run-delete-error">
            {errorMessage(remove.error)}
          </div>
        )}
      </div>
    </header>
  );
}
