"use client";

import { createContext, useContext, type ReactNode } from "react";
import { optionNotes } from "../../../designer/components/fields";
import { getIn, type Draft } from "../../lib/draftPath";
import { fieldDomId, type SpecIssue } from "../../lib/specIssues";

/** The draft and its live issues, shared by every input of the composer. */
export interface ComposerState {
  draft: Draft;
  set(path: string, value: unknown): void;
  issues: Map<string, SpecIssue[]>;
}

export const ComposerContext = createContext<ComposerState | null>(null);

export function useComposer(): ComposerState {
  const ctx = useContext(ComposerContext);
  if (!ctx) throw new Error("ComposerContext missing");
  return ctx;
}

/** The first issue at exactly `path`, shown under its input. */
export function IssueText({ path }: { path: string }) {
  const { issues } = useComposer();
  const issue = issues.get(path)?.[0];
  return issue ? (
    <span className="field-error" id={`${fieldDomId(path)}-error`} data-testid={`issue-${path}`}>
      {issue.message}
    </span>
  ) : null;
}

/** What kind of input a draft field is, with what that kind needs. */
export type DraftInput =
  /** Empty means "the schema default" (shown as the placeholder). */
  | { kind: "number"; placeholder?: string; integer?: boolean }
  /** `emptyIsUnset`: an emptied input removes the field (an optional one whose empty text is invalid). */
  | { kind: "text"; placeholder?: string; emptyIsUnset?: boolean }
  /**
   * `fallback`: what the schema fills in when the draft has no value. `unavailable` / `conditions`: options
   * no runner can honour (disabled, reason shown) or that need an extra on the runner (see runnerSupport).
   */
  | { kind: "select"; options: readonly string[]; fallback: string; unavailable?: Readonly<Record<string, string>>; conditions?: Readonly<Record<string, string>> }
  | { kind: "checkbox"; fallback: boolean };

/**
 * One composer input bound to the draft at `path`: label, input, hint and the first issue at that
 * path. The input's id is the path's (`fieldDomId`), so the issue list can jump to it, and an input
 * with an issue points to it (`aria-describedby`).
 */
export function DraftField(props: { path: string; label: string; hint?: ReactNode } & DraftInput) {
  const { draft, set, issues } = useComposer();
  const id = fieldDomId(props.path);
  const value = getIn(draft, props.path);
  const control = {
    id,
    ...(issues.has(props.path) ? { "aria-invalid": true as const, "aria-describedby": `${id}-error` } : {}),
  };
  const label = <label htmlFor={id}>{props.label}</label>;
  const hint = props.hint && <span className="hint">{props.hint}</span>;
  if (props.kind === "checkbox") {
    return (
      <div className="form-field checkbox">
        <input type="checkbox" checked={typeof value === "boolean" ? value : props.fallback} onChange={(e) => set(props.path, e.target.checked)} {...control} />
        {label}
        {hint}
        <IssueText path={props.path} />
      </div>
    );
  }
  return (
    <div className="form-field">
      {label}
      {draftInput(props, value, (v) => set(props.path, v), control)}
      {hint}
      <IssueText path={props.path} />
    </div>
  );
}

function draftInput(input: Exclude<DraftInput, { kind: "checkbox" }>, value: unknown, set: (value: unknown) => void, control: { id: string }): ReactNode {
  switch (input.kind) {
    case "number":
      return (
        <input
          type="number"
          step={input.integer ? "1" : "any"}
          value={typeof value === "number" ? value : ""}
          placeholder={input.placeholder}
          onChange={(e) => set(e.target.value === "" ? undefined : Number(e.target.value))}
          {...control}
        />
      );
    case "text":
      return (
        <input
          type="text"
          value={typeof value === "string" ? value : ""}
          placeholder={input.placeholder}
          onChange={(e) => set(input.emptyIsUnset && e.target.value === "" ? undefined : e.target.value)}
          {...control}
        />
      );
    case "select": {
      const current = typeof value === "string" ? value : input.fallback;
      const notes = optionNotes(input.options, current, input.unavailable, input.conditions);
      return (
        <>
          <select value={current} onChange={(e) => set(e.target.value)} {...control}>
            {input.options.map((o) => {
              const reason = input.unavailable?.[o];
              return (
                <option key={o} value={o} disabled={reason !== undefined && o !== current}>
                  {reason !== undefined ? `${o} (unavailable)` : o}
                </option>
              );
            })}
          </select>
          {notes.map((n) => (
            <span key={n.value} className={n.blocking ? "field-error" : "option-note"} data-testid={`note-${control.id}-${n.value}`}>
              {n.text}
            </span>
          ))}
        </>
      );
    }
  }
}
