"use client";

import { ActorSpec } from "@troupe/contracts";
import { usePartEditor } from "../../hooks/usePartEditor";
import { PartEditorShell } from "../PartEditorShell";
import { PartsList } from "../PartsList";
import { ActorForm, BLANK_ACTOR } from "./ActorForm";

function modelLabel(spec: Record<string, unknown>): string {
  const model = (spec.model ?? {}) as Record<string, string>;
  const where =
    model.source === "huggingface" ? model.id : model.source === "local" ? model.path : model.source === "run" ? `run ${model.runId} step ${model.step}` : model.preset ?? "tiny";
  const role = spec.trainable === false ? "frozen" : "trainable";
  const training = (spec.training ?? {}) as Record<string, string>;
  // The engine only when it is not the default, so the common case stays short.
  const engine = [training.backend, training.precision].filter((v) => v && v !== "torch" && v !== "fp32").join(" ");
  return `${where ?? model.source} · ${(spec.backend as string) ?? "hf"} · ${role}${engine ? ` · ${engine}` : ""}`;
}

/** /designer/actors: the saved actors on the left, the selected one (or a new one) on the right. */
export function ActorsPage() {
  const editor = usePartEditor("actor", ActorSpec, BLANK_ACTOR);
  const items = (editor.list.data?.items ?? []).map((p) => ({ id: p.id, name: p.name, sub: modelLabel(p.spec) }));
  return (
    <div className="parts-layout">
      <PartsList
        title="Actors"
        items={items}
        selectedId={editor.selectedId}
        onSelect={editor.select}
        onNew={() => editor.select(null)}
        newLabel="New actor"
        loading={editor.list.isLoading}
        empty="No actors yet: fill in the form to create one."
        testId="actors-list"
      />
      <PartEditorShell kindLabel="actor" name={String(editor.spec.name ?? "")} editor={editor}>
        <ActorForm spec={editor.spec} errors={editor.errors} onChange={editor.setSpec} />
      </PartEditorShell>
    </div>
  );
}
