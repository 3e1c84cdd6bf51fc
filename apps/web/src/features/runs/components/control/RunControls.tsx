"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { RunState, RuntimeControlCommandName } from "@troupe/contracts";
import { useEffect, useState } from "react";
import { errorMessage } from "../../../../trpc/errors";
import { useTRPC } from "../../../../trpc/react";
import { refetchAfterWrite } from "../../../../trpc/refetch";
import { useRoleRefusal } from "../../../auth/components/CurrentUser";

const RESUMABLE: readonly RunState[] = ["failed", "cancelled", "stopped"];

interface ControlButton {
  action: RuntimeControlCommandName;
  label: string;
  pending: string;
  testId: string;
  /** Why the button is disabled in this state (null: enabled). */
  why(status: RunState): string | null;
}

const BUTTONS: ControlButton[] = [
  {
    action: "pause",
    label: "Pause",
    pending: "Pausing…",
    testId: "run-pause",
    why: (s) => (s === "running" ? null : s === "paused" ? "Already paused" : `Only a running run can be paused (this one is ${s})`),
  },
  {
    action: "resume",
    label: "Resume",
    pending: "Resuming…",
    testId: "run-resume",
    why: (s) => (s === "paused" ? null : `Only a paused run can be resumed (this one is ${s})`),
  },
  {
    action: "stop_after_step",
    label: "Stop after this step",
    pending: "Stopping…",
    testId: "run-stop",
    why: (s) =>
      s === "running" || s === "paused" ? null : `Only a running or paused run can be stopped after its step (this one is ${s})`,
  },
];

/**
 * Pause / Resume / Stop after this step for a live run, and Resume from checkpoint for an ended
 * one. Each disabled button says why in its tooltip. A command acts at the run's next step
 * boundary, so the button shows "…ing" until the status the runtime reports catches up.
 */
export function RunControls({ runId, status, storedStatus }: { runId: string; status: RunState; storedStatus: RunState }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [requested, setRequested] = useState<{ action: RuntimeControlCommandName; at: RunState } | null>(null);
  useEffect(() => {
    if (requested && requested.at !== status) setRequested(null); // the run moved: the command took effect
  }, [status, requested]);

  const refresh = () => refetchAfterWrite(queryClient, { queryKey: trpc.run.byId.queryKey({ runId }) });
  const control = useMutation(trpc.run.control.mutationOptions({ onSettled: refresh }));
  const checkpoints = useQuery({ ...trpc.run.checkpoints.queryOptions({ runId }), enabled: RESUMABLE.includes(status) });
  const resume = useMutation(
    trpc.run.resumeFromCheckpoint.mutationOptions({
      // The page's live state (stream cursor, ended flag) belongs to the ended attempt: start afresh.
      onSuccess: () => window.location.reload(),
    }),
  );
  // Deleted folders (trainer.keepCheckpoints) cannot be resumed from: the server skips them too.
  const latest = checkpoints.data?.checkpoints.reduce((max, c) => (c.pruned ? max : Math.max(max, c.step)), -1) ?? -1;
  // A viewer may not control runs: every button disabled, the reason in words (the server says the same).
  const controlRefused = useRoleRefusal("run.control");
  const resumeRefused = useRoleRefusal("run.resumeFromCheckpoint");
  const resumeWhy = resumeRefused ?? (!RESUMABLE.includes(status)
    ? `Only a stopped, failed or cancelled run resumes from a checkpoint (this one is ${status})`
    : !RESUMABLE.includes(storedStatus)
      ? // The stream reports the end before the runner has settled the row (its process is still exiting).
        "Waiting for the runner to finish the run…"
      : checkpoints.isPending
      ? "Looking for checkpoints…"
      : latest < 0
        ? "This run has no checkpoint (set trainer.checkpointEvery, or use Stop after this step)"
        : null);

  return (
    <>
      {BUTTONS.map((b) => {
        const why = controlRefused ?? b.why(status);
        const pending = requested?.action === b.action || (control.isPending && control.variables?.action === b.action);
        return (
          <span key={b.action} title={why ?? undefined} data-testid={`${b.testId}-wrap`}>
            <button
              type="button"
              className="secondary"
              disabled={why !== null || pending}
              data-testid={b.testId}
              onClick={() =>
                control.mutate({ runId, action: b.action }, { onSuccess: () => setRequested({ action: b.action, at: status }) })
              }
            >
              {pending ? b.pending : b.label}
            </button>
          </span>
        );
      })}
      <span title={resumeWhy ?? `Continue as a new attempt from the checkpoint of step ${latest}`} data-testid="run-resume-checkpoint-wrap">
        <button
          type="button"
          className="secondary"
          disabled={resumeWhy !== null || resume.isPending}
          data-testid="run-resume-checkpoint"
          onClick={() => resume.mutate({ runId })}
        >
          {resume.isPending ? "Queuing…" : latest >= 0 ? `Resume from step ${latest}` : "Resume from checkpoint"}
        </button>
      </span>
      {(control.error ?? resume.error) && (
        <div className="field-error" role="alert">
          {errorMessage((control.error ?? resume.error)!)}
        </div>
      )}
    </>
  );
}
