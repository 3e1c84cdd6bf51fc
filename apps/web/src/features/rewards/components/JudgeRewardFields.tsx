"use client";

import { useId } from "react";
import { NumberField, SelectField, TextField } from "../../designer/components/fields";

const PARSERS = [
  { value: "number", label: "number: the first number in the reply" },
  { value: "yes_no", label: "yes / no: 1 for yes, 0 for no" },
  { value: "regex", label: "regex: its first group (or the group named score)" },
] as const;

/**
 * The settings of a judge reward (`source.kind: "judge"`): which frozen actor of the run judges, the prompt it gets
 * (a Jinja template over the reply and the row), and how its answer becomes a score.
 */
export function JudgeRewardFields(props: {
  scope: "completion" | "conversation";
  value: (path: string) => unknown;
  set: (path: string) => (value: unknown) => void;
  error: (path: string) => string | undefined;
}) {
  const { scope, value, set, error } = props;
  const promptId = useId();
  const parser = (value("source.parser.kind") as string | undefined) ?? "number";
  const variables = scope === "completion" ? "{{ prompt }}, {{ completion }}" : "{{ transcript }}, {{ conversation }}, {{ actor_name }}";
  return (
    <fieldset data-testid="judge-fields">
      <legend>Judge</legend>
      <div className="form-grid">
        <TextField
          label="Judge actor"
          hint="A frozen actor of the experiment (a local model, or one behind an OpenAI-compatible API); a trainable one is refused at launch."
          value={value("source.actor") as string}
          onChange={set("source.actor")}
          error={error("source.actor")}
          testId="judge-actor"
        />
        <SelectField
          label="Reading the reply"
          value={parser as "number" | "yes_no" | "regex"}
          options={PARSERS}
          onChange={(v) => set("source.parser")(v === "regex" ? { kind: v, pattern: "(\\d+)" } : { kind: v })}
          error={error("source.parser.kind")}
          hint="A reply that cannot be read scores the failure score and is logged with the reply."
        />
        {parser === "number" ? (
          <>
            <NumberField label="Lowest score" value={value("source.parser.min")} onChange={set("source.parser.min")} error={error("source.parser.min")} placeholder="no bound" />
            <NumberField label="Highest score" value={value("source.parser.max")} onChange={set("source.parser.max")} error={error("source.parser.max")} placeholder="no bound" />
          </>
        ) : null}
        {parser === "regex" ? (
          <TextField label="Pattern" value={value("source.parser.pattern") as string} onChange={set("source.parser.pattern")} error={error("source.parser.pattern")} testId="judge-pattern" />
        ) : null}
        <NumberField label="Batch size" hint="Prompts per call to the judge." value={value("source.batchSize")} onChange={set("source.batchSize")} error={error("source.batchSize")} placeholder={16} />
      </div>
      <div className="form-field">
        <label htmlFor={promptId}>Judge prompt</label>
        <textarea
          id={promptId}
          rows={6}
          value={(value("source.prompt") as string | undefined) ?? ""}
          onChange={(e) => set("source.prompt")(e.target.value)}
          aria-invalid={error("source.prompt") ? true : undefined}
          data-testid="judge-prompt"
        />
        <span className="hint">
          Jinja, over {variables} and the row&apos;s columns ({"{{ answer }}"}). Each distinct prompt is asked once per run (cached).
        </span>
        {error("source.prompt") ? <span className="field-error">{error("source.prompt")}</span> : null}
      </div>
    </fieldset>
  );
}
