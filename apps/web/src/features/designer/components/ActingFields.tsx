"use client";

import { CheckboxField, NumberField, TextField } from "./fields";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Draft = Record<string, any>;

const BUILTIN_TOOLS = [
  { value: "calculator", hint: "arithmetic, evaluated from the parsed expression" },
  { value: "python", hint: "runs the model's code in the sandbox and returns what it prints" },
] as const;

/**
 * The settings of environments that act (gpu-runtime acting.py): `code` (test cases run in the sandbox,
 * failures fed back), `tools` (tool calls answered between turns) and `python` (a troupe.Environment class on
 * the runner). Shown only for those kinds; `issues` are keyed by paths relative to the environment.
 */
export function ActingFields(props: { kind: string; draft: Draft; set(key: string, value: unknown): void; issues: Record<string, string> }) {
  const { kind, draft, set, issues } = props;
  if (kind === "code") {
    const code: Draft = draft.code ?? {};
    const put = (key: string, value: unknown) => set("code", { ...code, [key]: value });
    return (
      <fieldset data-testid="code-fields">
        <legend>Code</legend>
        <div className="form-grid">
          <TextField
            label="Tests field"
            value={code.testsField}
            placeholder="tests"
            onChange={(v) => put("testsField", v)}
            hint='Dataset column with the test cases: [{"input": stdin, "output": expected stdout}, …] (a list or a JSON string).'
            error={issues["code.testsField"]}
            testId="code-tests-field"
          />
          <NumberField
            label="Tries"
            value={code.maxTries}
            placeholder={2}
            onChange={(v) => put("maxTries", v)}
            hint="After a failing try the failures are fed back and the model tries again. Reward component pass_rate."
            error={issues["code.maxTries"]}
          />
        </div>
        <p className="hint muted small">Programs run in the sandbox under the run&apos;s sandbox limits (no network, memory, CPU, processes, output).</p>
      </fieldset>
    );
  }
  if (kind === "tools") {
    const tools: Draft = draft.tools ?? {};
    const builtin: string[] = Array.isArray(tools.builtin) ? tools.builtin : ["calculator"];
    const put = (key: string, value: unknown) => set("tools", { ...tools, [key]: value });
    return (
      <fieldset data-testid="tools-fields">
        <legend>Tools</legend>
        {BUILTIN_TOOLS.map((t) => (
          <CheckboxField
            key={t.value}
            label={t.value}
            hint={t.hint}
            checked={builtin.includes(t.value)}
            onChange={(on) => put("builtin", on ? [...builtin.filter((b) => b !== t.value), t.value] : builtin.filter((b) => b !== t.value))}
            testId={`tool-${t.value}`}
          />
        ))}
        <div className="form-field">
          <label htmlFor="tools-code">Your tools (Python: every public top-level function is a tool; its docstring describes it)</label>
          <textarea
            id="tools-code"
            rows={6}
            value={tools.code ?? ""}
            onChange={(e) => put("code", e.target.value === "" ? undefined : e.target.value)}
            spellCheck={false}
            data-testid="tools-code"
          />
          {issues["tools.code"] ? (
            <span className="field-error" role="alert">
              {issues["tools.code"]}
            </span>
          ) : null}
        </div>
        <NumberField label="Calls per episode" value={tools.maxCalls} placeholder={4} onChange={(v) => put("maxCalls", v)} error={issues["tools.maxCalls"]} />
        <p className="hint muted small">
          Calls use the chat templates&apos; format, <code>{'<tool_call>{"name": …, "arguments": {…}}</tool_call>'}</code>; the episode ends at the
          first message without one, which the rewards score.
        </p>
      </fieldset>
    );
  }
  if (kind === "python") {
    return (
      <fieldset data-testid="python-env-fields">
        <legend>Python environment</legend>
        <TextField
          label="Entrypoint"
          value={draft.entrypoint}
          placeholder="my_envs:Chess"
          onChange={(v) => set("entrypoint", v)}
          hint="A troupe.Environment subclass on the runner: module:Class (importable there) or file.py:Class in the run folder."
          error={issues.entrypoint}
          testId="env-entrypoint"
        />
      </fieldset>
    );
  }
  return null;
}
