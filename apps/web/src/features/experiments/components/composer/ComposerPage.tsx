"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useMemo, useState } from "react";
import { errorMessage } from "../../../../trpc/errors";
import { useTRPC } from "../../../../trpc/react";
import { useDraft } from "../../../designer/hooks/useDraft";
import { useLibrary } from "../../../designer/hooks/useLibrary";
import { setIn, type Draft } from "../../lib/draftPath";
import { switchLearner } from "../../lib/learnerSwitch";
import { issuesByPath, validateDraft } from "../../lib/specIssues";
import { useRunnerLaunchIssues } from "../../hooks/useRunnerLaunchIssues";
import { DEFAULT_ASSUMPTIONS, type MemoryAssumptions } from "../../lib/specMemory";
import { ComposerContext, type ComposerState } from "./fields";
import { IssueList } from "./IssueList";
import { LaunchPanel } from "./LaunchPanel";
import { MemoryEstimatePanel } from "./MemoryEstimatePanel";
import { PartsSections } from "./PartsSections";
import { SettingsSections } from "./SettingsSections";
import { SpecTextPanel } from "./SpecTextPanel";
import "./composer.css";
import { refetchAfterWrite } from "../../../../trpc/refetch";

const EMPTY: Draft = {};

/**
 * The experiment composer: a RunSpec put together from library parts plus algorithm and trainer
 * settings, validated on every edit with the contracts schema (and the dsl for round specs), saved
 * as a draft on the Experiment row, launched through the one launch path.
 */
export function ComposerPage({ experimentId }: { experimentId: string }) {
  const trpc = useTRPC();
  const experiment = useQuery(trpc.experiment.byId.queryOptions({ id: experimentId }, { retry: false }));
  if (experiment.isPending) return <p className="muted">Loading experiment…</p>;
  if (experiment.isError) {
    return (
      <div className="panel empty">
        <b>{experiment.error.data?.code === "NOT_FOUND" ? "Experiment not found." : `Could not load it: ${errorMessage(experiment.error)}`}</b>{" "}
        <Link href="/designer/experiments">All experiments</Link>
      </div>
    );
  }
  const saved = experiment.data.spec;
  return <Composer experimentId={experimentId} saved={saved !== null && typeof saved === "object" && !Array.isArray(saved) ? (saved as Draft) : EMPTY} fallbackName={experiment.data.name} />;
}

/** Mounted once the stored spec is known, so the draft starts from it (or from unsaved edits left in this tab). */
function Composer({ experimentId, saved, fallbackName }: { experimentId: string; saved: Draft; fallbackName: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const library = useLibrary();
  const draft = useDraft<Draft>(`experiment:${experimentId}`, saved);
  const [assumptions, setAssumptions] = useState<MemoryAssumptions>(DEFAULT_ASSUMPTIONS);

  const checked = useMemo(() => validateDraft(draft.value), [draft.value]);
  // The launch's runner check too (GPUs on a GPU-less host): invalid here, not only after the click.
  const runnerIssues = useRunnerLaunchIssues(checked.spec);
  const issues = useMemo(() => [...checked.issues, ...runnerIssues], [checked.issues, runnerIssues]);
  const spec = runnerIssues.length > 0 ? null : checked.spec;
  const byPath = useMemo(() => issuesByPath(issues), [issues]);
  const { setValue } = draft;
  const set = useCallback(
    (path: string, value: unknown) =>
      setValue((prev) => {
        if (path === "") return value as Draft;
        // A new learner drops the settings only the old one read (learnerSwitch.ts).
        if (path === "algorithm.name") return { ...prev, algorithm: switchLearner(prev.algorithm as Draft | undefined, String(value)) };
        return setIn(prev, path, value);
      }),
    [setValue],
  );
  const state: ComposerState = useMemo(() => ({ draft: draft.value, set, issues: byPath }), [draft.value, set, byPath]);

  const save = useMutation(trpc.experiment.save.mutationOptions());
  const launch = useMutation(trpc.experiment.launch.mutationOptions());

  async function saveDraft() {
    await save.mutateAsync({ id: experimentId, spec: draft.value });
    draft.reset(draft.value);
    await refetchAfterWrite(queryClient, { queryKey: trpc.experiment.byId.queryKey({ id: experimentId }) });
    await refetchAfterWrite(queryClient, { queryKey: trpc.experiment.list.pathKey() });
  }

  async function saveAndLaunch(args: { priority: number; gpus?: number }) {
    await saveDraft();
    const { runId } = await launch.mutateAsync({ experimentId, priority: args.priority, ...(args.gpus !== undefined ? { gpus: args.gpus } : {}) });
    await refetchAfterWrite(queryClient, { queryKey: trpc.run.list.pathKey() });
    router.push(`/runs/${runId}`);
  }

  return (
    <ComposerContext.Provider value={state}>
      <div className="composer-head">
        <h2>{String(draft.value.name || fallbackName)}</h2>
        <span className="form-status" data-testid="compose-status">
          {save.isPending ? "Saving…" : draft.dirty ? "Unsaved edits" : "Saved"}
        </span>
        {draft.restored && <span className="draft-note">Unsaved edits restored from your last visit.</span>}
        <button type="button" onClick={() => void saveDraft()} disabled={save.isPending || !draft.dirty} data-testid="compose-save">
          Save
        </button>
        {draft.dirty && (
          <button type="button" className="secondary" onClick={() => draft.reset(saved)}>
            Discard edits
          </button>
        )}
        <Link href={`/experiments/${experimentId}`} className="small">
          Runs of this experiment →
        </Link>
      </div>
      {save.error && (
        <div className="form-error" role="alert">
          Could not save: {errorMessage(save.error)}
        </div>
      )}
      <div className="composer-layout">
        <form className="part-form" onSubmit={(e) => e.preventDefault()} aria-label="Experiment spec">
          <SettingsSections />
          <PartsSections library={library} />
        </form>
        <aside className="composer-side">
          <section className="panel">
            <IssueList issues={issues} />
          </section>
          <LaunchPanel
            spec={spec}
            assumptions={assumptions}
            pending={launch.isPending || save.isPending}
            error={launch.error}
            onLaunch={(args) => void saveAndLaunch(args).catch(() => undefined)}
          />
          {checked.spec && <MemoryEstimatePanel spec={checked.spec} assumptions={assumptions} setAssumptions={setAssumptions} />}
          <SpecTextPanel draft={draft.value} onImport={(next) => draft.setValue(next)} />
        </aside>
      </div>
    </ComposerContext.Provider>
  );
}
