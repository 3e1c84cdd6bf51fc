"use client";

import { useState, type ReactNode } from "react";
import type { PartEditor } from "../hooks/usePartEditor";
import { TextField } from "./fields";

/**
 * The right column of a parts page: title, description, the kind's form, and Save / Duplicate /
 * Delete with the state of the draft (restored from this session, unsaved, saved) said in words.
 */
export function PartEditorShell({
  kindLabel,
  name,
  editor,
  children,
}: {
  kindLabel: string;
  name: string;
  editor: PartEditor;
  children: ReactNode;
}) {
  const isNew = editor.selectedId === null;
  const { description, setDescription: onDescription, dirty, restored, valid, saving, justSaved, formError } = editor;
  const { save: onSave, discard: onDiscard, duplicate: onDuplicate, remove: onDelete } = editor;
  const [confirmDelete, setConfirmDelete] = useState(false);
  return (
    <form
      className="part-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        onSave();
      }}
      aria-label={isNew ? `New ${kindLabel}` : `${kindLabel} ${name}`}
    >
      <div className="section-head">
        <h2 style={{ margin: 0 }}>{isNew ? `New ${kindLabel}` : name || `Unnamed ${kindLabel}`}</h2>
        <div className="form-actions">
          {restored ? <span className="draft-note">Unsaved edits restored from earlier in this session.</span> : null}
          {dirty && !restored ? <span className="draft-note">Unsaved changes</span> : null}
          {justSaved ? <span className="form-status" role="status">Saved</span> : null}
          {dirty ? (
            <button type="button" className="secondary" onClick={onDiscard}>
              Discard changes
            </button>
          ) : null}
          <button type="submit" disabled={saving || !valid || (!dirty && !isNew)} data-testid="part-save" title={valid ? undefined : "Fix the fields marked in red first"}>
            {saving ? "Saving…" : isNew ? `Create ${kindLabel}` : "Save"}
          </button>
        </div>
      </div>
      {formError ? (
        <p className="form-error" role="alert">
          {formError}
        </p>
      ) : null}
      <TextField label="Description" hint="Optional: what this is for." value={description || undefined} onChange={(v) => onDescription(v ?? "")} />
      {children}
      {!isNew ? (
        <div className="form-actions">
          <button type="button" className="secondary" onClick={onDuplicate} data-testid="part-duplicate">
            Duplicate
          </button>
          {confirmDelete ? (
            <>
              <span className="small">Delete {name}? Experiments that use it keep their own copy.</span>
              <button type="button" className="danger" onClick={onDelete} data-testid="part-delete-confirm">
                Delete
              </button>
              <button type="button" className="secondary" onClick={() => setConfirmDelete(false)}>
                Cancel
              </button>
            </>
          ) : (
            <button type="button" className="danger" onClick={() => setConfirmDelete(true)} data-testid="part-delete">
              Delete…
            </button>
          )}
        </div>
      ) : null}
    </form>
  );
}
