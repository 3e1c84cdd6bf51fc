"use client";

import { useEffect, useId, useState, type ReactNode } from "react";

/**
 * Form fields of the designer: a label, a one-line explanation, the input, and the error for this
 * field (from the contracts schema) right beside it. Every input is a native control, so the whole
 * form works from the keyboard.
 */

interface FieldShell {
  label: string;
  hint?: string;
  error?: string;
  testId?: string;
}

function Shell({ id, label, hint, error, children }: FieldShell & { id: string; children: ReactNode }) {
  return (
    <div className="form-field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint ? (
        <span className="hint" id={`${id}-hint`}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span className="field-error" id={`${id}-error`} role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}

function describedBy(id: string, hint?: string, error?: string, notes = false): string | undefined {
  const ids = [hint ? `${id}-hint` : null, error ? `${id}-error` : null, notes ? `${id}-notes` : null].filter(Boolean);
  return ids.length ? ids.join(" ") : undefined;
}

export function TextField(props: FieldShell & { value: string | undefined; onChange: (v: string | undefined) => void; placeholder?: string }) {
  const id = useId();
  return (
    <Shell id={id} {...props}>
      <input
        id={id}
        type="text"
        value={props.value ?? ""}
        placeholder={props.placeholder}
        onChange={(e) => props.onChange(e.target.value === "" ? undefined : e.target.value)}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
        data-testid={props.testId}
      />
    </Shell>
  );
}

/**
 * A number typed as text, so "1e-5" or a half-typed "0." never jumps; the spec gets a number when the
 * text parses, `undefined` (the schema default, shown as placeholder) when emptied, and the raw text
 * otherwise, which the schema then reports as "expected number" beside the field.
 */
export function NumberField(props: FieldShell & { value: unknown; onChange: (v: unknown) => void; placeholder?: number | string }) {
  const id = useId();
  const [text, setText] = useState(props.value === undefined ? "" : String(props.value));
  useEffect(() => {
    // Follow outside changes (draft restored, another part selected) without fighting the typist.
    const parsed = text.trim() === "" ? undefined : Number(text);
    if (parsed !== props.value && String(props.value ?? "") !== text) setText(props.value === undefined ? "" : String(props.value));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [props.value]);
  return (
    <Shell id={id} {...props}>
      <input
        id={id}
        type="text"
        inputMode="decimal"
        value={text}
        placeholder={props.placeholder === undefined ? undefined : String(props.placeholder)}
        onChange={(e) => {
          const t = e.target.value;
          setText(t);
          const trimmed = t.trim();
          props.onChange(trimmed === "" ? undefined : Number.isFinite(Number(trimmed)) ? Number(trimmed) : t);
        }}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
        data-testid={props.testId}
      />
    </Shell>
  );
}

/**
 * A choice among fixed options. `unavailable`: options no runner can honour (disabled, each reason shown
 * under the field); `conditions`: options that need something on the runner (selectable, the condition
 * shown while chosen). Both come from lib/runnerSupport.
 */
export function SelectField<T extends string>(
  props: FieldShell & {
    value: T | undefined;
    options: readonly T[] | readonly { value: T; label: string }[];
    onChange: (v: T) => void;
    defaultValue?: T;
    unavailable?: Readonly<Record<string, string>>;
    conditions?: Readonly<Record<string, string>>;
  },
) {
  const id = useId();
  const options = props.options.map((o) => (typeof o === "string" ? { value: o, label: o } : o));
  const current = props.value ?? props.defaultValue ?? options[0]?.value;
  const notes = optionNotes(options.map((o) => o.value), current, props.unavailable, props.conditions);
  return (
    <Shell id={id} {...props}>
      <select
        id={id}
        value={current}
        onChange={(e) => props.onChange(e.target.value as T)}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={describedBy(id, props.hint, props.error, notes.length > 0)}
        data-testid={props.testId}
      >
        {options.map((o) => {
          const reason = props.unavailable?.[o.value];
          return (
            <option key={o.value} value={o.value} disabled={reason !== undefined && o.value !== current}>
              {reason !== undefined ? `${o.label} (unavailable)` : o.label}
            </option>
          );
        })}
      </select>
      {notes.length > 0 ? (
        <span id={`${id}-notes`} className="option-notes">
          {notes.map((n) => (
            <span key={n.value} className={n.blocking ? "field-error" : "option-note"} data-testid={props.testId ? `${props.testId}-note-${n.value}` : undefined}>
              {n.text}
            </span>
          ))}
        </span>
      ) : null}
    </Shell>
  );
}

/** The lines under a select: each unavailable option's reason, and the chosen option's condition. */
export function optionNotes(
  values: readonly string[],
  current: string | undefined,
  unavailable: Readonly<Record<string, string>> = {},
  conditions: Readonly<Record<string, string>> = {},
): { value: string; text: string; blocking: boolean }[] {
  const out: { value: string; text: string; blocking: boolean }[] = [];
  for (const value of values) {
    const reason = unavailable[value];
    // A saved part may already hold an unavailable value: then it is a problem, not a remark.
    if (reason !== undefined) out.push({ value, text: value === current ? `${value} cannot run: ${reason}` : `${value}: ${reason}`, blocking: value === current });
  }
  const condition = current === undefined ? undefined : conditions[current];
  if (current !== undefined && condition !== undefined) out.push({ value: current, text: `${current} ${condition}`, blocking: false });
  return out;
}

export function CheckboxField(props: FieldShell & { checked: boolean; onChange: (v: boolean) => void }) {
  const id = useId();
  return (
    <div className="form-field checkbox">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        onChange={(e) => props.onChange(e.target.checked)}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
        data-testid={props.testId}
      />
      <label htmlFor={id}>{props.label}</label>
      {props.hint ? (
        <span className="hint" id={`${id}-hint`}>
          — {props.hint}
        </span>
      ) : null}
      {props.error ? (
        <span className="field-error" id={`${id}-error`} role="alert" style={{ flexBasis: "100%" }}>
          {props.error}
        </span>
      ) : null}
    </div>
  );
}

/** A comma-separated list (GPU ids, LoRA target modules). */
export function ListField(
  props: FieldShell & { value: unknown; onChange: (v: unknown) => void; numbers?: boolean; placeholder?: string },
) {
  const id = useId();
  const current = Array.isArray(props.value) ? props.value.join(", ") : "";
  const [text, setText] = useState(current);
  useEffect(() => {
    if (current !== text.split(",").map((s) => s.trim()).filter(Boolean).join(", ")) setText(current);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [current]);
  return (
    <Shell id={id} {...props}>
      <input
        id={id}
        type="text"
        value={text}
        placeholder={props.placeholder}
        onChange={(e) => {
          setText(e.target.value);
          const items = e.target.value.split(",").map((s) => s.trim()).filter(Boolean);
          if (items.length === 0) return props.onChange(undefined);
          props.onChange(props.numbers ? items.map((s) => (/^-?\d+$/.test(s) ? Number(s) : s)) : items);
        }}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
        data-testid={props.testId}
      />
    </Shell>
  );
}
