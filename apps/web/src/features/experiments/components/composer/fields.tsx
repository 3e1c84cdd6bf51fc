"use client";

import { createContext, useContext, type ReactNode } from "react";
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

function Shell(props: { path: string; label: string; hint?: ReactNode; children: ReactNode }) {
  return (
    <div className="form-field">
      <label htmlFor={fieldDomId(props.path)}>{props.label}</label>
      {props.children}
      {props.hint && <span className="hint">{props.hint}</span>}
      <IssueText path={props.path} />
    </div>
  );
}

function invalid(issues: Map<string, SpecIssue[]>, path: string) {
  return issues.has(path) ? { "aria-invalid": true as const, "aria-describedby": `${fieldDomId(path)}-error` } : {};
}

/** A number; empty means "the schema default" (shown as the placeholder). */
export function NumberField(props: { path: string; label: string; hint?: ReactNode; placeholder?: string; step?: string; integer?: boolean }) {
  const { draft, set, issues } = useComposer();
  const value = getIn(draft, props.path);
  return (
    <Shell {...props}>
      <input
        id={fieldDomId(props.path)}
        type="number"
        step={props.step ?? (props.integer ? "1" : "any")}
        value={typeof value === "number" ? value : ""}
        placeholder={props.placeholder}
        onChange={(e) => set(props.path, e.target.value === "" ? undefined : Number(e.target.value))}
        {...invalid(issues, props.path)}
      />
    </Shell>
  );
}

export function TextField(props: { path: string; label: string; hint?: ReactNode; placeholder?: string }) {
  const { draft, set, issues } = useComposer();
  const value = getIn(draft, props.path);
  return (
    <Shell {...props}>
      <input
        id={fieldDomId(props.path)}
        type="text"
        value={typeof value === "string" ? value : ""}
        placeholder={props.placeholder}
        onChange={(e) => set(props.path, e.target.value)}
        {...invalid(issues, props.path)}
      />
    </Shell>
  );
}

export function SelectField(props: { path: string; label: string; hint?: ReactNode; options: readonly string[]; fallback: string }) {
  const { draft, set, issues } = useComposer();
  const value = getIn(draft, props.path);
  return (
    <Shell {...props}>
      <select
        id={fieldDomId(props.path)}
        value={typeof value === "string" ? value : props.fallback}
        onChange={(e) => set(props.path, e.target.value)}
        {...invalid(issues, props.path)}
      >
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </Shell>
  );
}

export function CheckboxField(props: { path: string; label: string; fallback: boolean; hint?: ReactNode }) {
  const { draft, set } = useComposer();
  const value = getIn(draft, props.path);
  return (
    <div className="form-field checkbox">
      <input
        id={fieldDomId(props.path)}
        type="checkbox"
        checked={typeof value === "boolean" ? value : props.fallback}
        onChange={(e) => set(props.path, e.target.checked)}
      />
      <label htmlFor={fieldDomId(props.path)}>{props.label}</label>
      {props.hint && <span className="hint">{props.hint}</span>}
      <IssueText path={props.path} />
    </div>
  );
}
