"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import type { z } from "zod";
import { errorMessage, fieldIssuesOf } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { issuesByPath, type SpecObject } from "../lib/specPath";
import type { PartKind } from "../server/partSchemas";
import { forgetDraft, useDraft } from "./useDraft";
import { refetchAfterWrite } from "../../../trpc/refetch";

interface Draft {
  spec: SpecObject;
  description: string;
}

/**
 * Everything a parts page needs for one kind: the list, the selected part's working copy (a draft
 * kept in sessionStorage), live validation with the contracts schema, and save / duplicate / delete
 * with the server's field errors merged in. `schema` is the kind's contracts schema; the server runs
 * the same one, so what passes here passes there.
 */
export function usePartEditor(kind: PartKind, schema: z.ZodType, blank: SpecObject) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const list = useQuery(trpc.part.list.queryOptions({ kind }));
  const selected = list.data?.items.find((p) => p.id === selectedId) ?? null;
  const saved: Draft = useMemo(
    () => (selected ? { spec: selected.spec, description: selected.description } : { spec: blank, description: "" }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [selected?.id, selected?.updatedAt.getTime()],
  );
  const draft = useDraft<Draft>(`${kind}:${selectedId ?? "new"}`, saved);

  const refresh = () => refetchAfterWrite(queryClient, { queryKey: trpc.part.list.queryKey({ kind }) });
  const onSaved = async (part: { id: string; spec: SpecObject; description: string }) => {
    await refresh();
    draft.reset({ spec: part.spec, description: part.description });
    setSelectedId(part.id);
  };
  const create = useMutation(trpc.part.create.mutationOptions({ onSuccess: onSaved }));
  const update = useMutation(trpc.part.update.mutationOptions({ onSuccess: onSaved }));
  const duplicate = useMutation(trpc.part.duplicate.mutationOptions({ onSuccess: onSaved }));
  const remove = useMutation(
    trpc.part.delete.mutationOptions({
      onSuccess: async () => {
        draft.reset(saved);
        setSelectedId(null);
        await refresh();
      },
    }),
  );

  const live = schema.safeParse(draft.value.spec);
  const liveIssues = live.success ? [] : live.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  const saveError = create.error ?? update.error;
  // A blank new form is not "wrong" yet: say nothing until the user has typed something.
  const showLive = draft.dirty || selectedId !== null;
  const errors = { ...(showLive ? issuesByPath(liveIssues) : {}), ...issuesByPath(fieldIssuesOf(saveError)) };
  const unplacedError = saveError && fieldIssuesOf(saveError).length === 0 ? errorMessage(saveError) : null;

  return {
    list,
    selected,
    selectedId,
    /** Open a part, or (null) a blank new one: "New" never brings back an earlier unsaved or refused draft. */
    select(id: string | null) {
      create.reset();
      update.reset();
      if (id === null) {
        try {
          forgetDraft(sessionStorage, `${kind}:new`);
        } catch {
          /* storage disabled: nothing was kept */
        }
        if (selectedId === null) draft.reset({ spec: blank, description: "" });
      }
      setSelectedId(id);
    },
    spec: draft.value.spec,
    description: draft.value.description,
    setSpec: (update: (spec: SpecObject) => SpecObject) => draft.setValue((d) => ({ ...d, spec: update(d.spec) })),
    setDescription: (description: string) => draft.setValue((d) => ({ ...d, description })),
    dirty: draft.dirty,
    restored: draft.restored,
    discard: () => draft.reset(saved),
    valid: live.success,
    errors,
    /** Problems not tied to one field (network, conflict without a path). */
    formError: unplacedError ?? (duplicate.error ? errorMessage(duplicate.error) : null) ?? (remove.error ? errorMessage(remove.error) : null),
    saving: create.isPending || update.isPending,
    save() {
      const input = { spec: draft.value.spec, description: draft.value.description };
      if (selectedId) update.mutate({ id: selectedId, ...input });
      else create.mutate({ kind, ...input });
    },
    duplicate: () => selectedId && duplicate.mutate({ id: selectedId }),
    remove: () => selectedId && remove.mutate({ id: selectedId }),
    justSaved: (create.isSuccess || update.isSuccess || duplicate.isSuccess) && !draft.dirty,
  };
}

/** What a parts page edits with: the list, the draft, its validation and the save/duplicate/delete actions. */
export type PartEditor = ReturnType<typeof usePartEditor>;
