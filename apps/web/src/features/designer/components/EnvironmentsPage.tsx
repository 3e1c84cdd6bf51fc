"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage, fieldIssuesOf } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { useDraft } from "../hooks/useDraft";
import { useLibrary } from "../hooks/useLibrary";
import { issuesByPath } from "../lib/specPath";
import { EnvironmentForm, type EnvDraft } from "./EnvironmentForm";
import { refetchAfterWrite } from "../../../trpc/refetch";

const NEW_ENVIRONMENT: EnvDraft = { name: "", kind: "collaborative", actors: [], rewards: [], roundSpec: undefined };

/** Environments: a RunSpec `environments[]` entry each, saved as a designer part of kind environment. */
export function EnvironmentsPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const library = useLibrary();
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const selected = library.environments.find((e) => e.id === selectedId) ?? null;
  const saved: EnvDraft = selected ? (selected.spec as EnvDraft) : NEW_ENVIRONMENT;
  const draft = useDraft<EnvDraft>(`environment:${selectedId ?? "new"}`, saved);

  const invalidate = () => refetchAfterWrite(queryClient, { queryKey: trpc.part.list.queryKey({ kind: "environment" }) });
  const create = useMutation(
    trpc.part.create.mutationOptions({
      onSuccess: async (part) => {
        draft.reset(NEW_ENVIRONMENT);
        await invalidate();
        setSelectedId(part.id);
      },
    }),
  );
  const update = useMutation(
    trpc.part.update.mutationOptions({
      onSuccess: async (part) => {
        draft.reset(part.spec);
        await invalidate();
      },
    }),
  );
  const remove = useMutation(
    trpc.part.delete.mutationOptions({
      onSuccess: async () => {
        draft.reset(NEW_ENVIRONMENT);
        setSelectedId(null);
        await invalidate();
      },
    }),
  );
  const pending = create.isPending || update.isPending || remove.isPending;
  const error = create.error ?? update.error ?? remove.error;
  const issues = issuesByPath(fieldIssuesOf(error));

  function save() {
    const spec = stripEmpty(draft.value);
    if (selected) update.mutate({ id: selected.id, spec });
    else create.mutate({ kind: "environment", spec });
  }

  return (
    <div className="parts-layout">
      <nav className="parts-list" aria-label="Environments">
        <button type="button" onClick={() => setSelectedId(null)} data-testid="env-new">
          + New environment
        </button>
        <ul>
          {library.environments.map((e) => {
            const spec = e.spec as EnvDraft;
            return (
              <li key={e.id}>
                <button type="button" aria-current={e.id === selectedId ? "true" : undefined} onClick={() => setSelectedId(e.id)}>
                  {e.name}
                  <span className="part-sub">
                    {spec.kind ?? "single_turn"} · {(spec.actors ?? []).join(", ")}
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
        {library.environments.length === 0 && !library.loading && <p className="muted small">No environments yet.</p>}
      </nav>
      <section>
        <div className="section-head">
          <h2>{selected ? selected.name : "New environment"}</h2>
          {draft.restored && <span className="draft-note">Unsaved edits restored from your last visit.</span>}
        </div>
        <EnvironmentForm
          draft={draft.value}
          setDraft={draft.setValue}
          issues={issues}
          actorNames={library.actors.map((a) => a.name)}
          rewardNames={library.rewards.map((r) => r.name)}
          datasets={library.datasets}
        />
        {error && fieldIssuesOf(error).length === 0 && (
          <div className="form-error" role="alert">
            {errorMessage(error)}
          </div>
        )}
        {error && fieldIssuesOf(error).length > 0 && (
          <ul className="form-error" role="alert" data-testid="env-save-issues">
            {fieldIssuesOf(error).map((i, k) => (
              <li key={k}>
                {i.path}: {i.message}
              </li>
            ))}
          </ul>
        )}
        <div className="form-actions" style={{ marginTop: "1rem" }}>
          <button type="button" onClick={save} disabled={pending} data-testid="env-save">
            {selected ? "Save" : "Create environment"}
          </button>
          {draft.dirty && (
            <button type="button" className="secondary" onClick={() => draft.reset(saved)}>
              Discard edits
            </button>
          )}
          {selected && (
            <button type="button" className="secondary danger" onClick={() => remove.mutate({ id: selected.id })} disabled={pending}>
              Delete
            </button>
          )}
          <span className="form-status">{draft.dirty ? "Unsaved edits" : selected ? "Saved" : ""}</span>
        </div>
      </section>
    </div>
  );
}

/** Drop keys a form left undefined so the schema's defaults apply. */
function stripEmpty(spec: EnvDraft): EnvDraft {
  return JSON.parse(JSON.stringify(spec)) as EnvDraft;
}
