"use client";

import { useQuery } from "@tanstack/react-query";
import { RewardSpec } from "@troupe/contracts";
import { useId, useState } from "react";
import { useTRPC } from "../../../trpc/react";
import { PartEditorShell } from "../../designer/components/PartEditorShell";
import { PartsList } from "../../designer/components/PartsList";
import { NumberField, SelectField, TextField } from "../../designer/components/fields";
import { usePartEditor } from "../../designer/hooks/usePartEditor";
import { useRunnerSupport } from "../../designer/hooks/useRunnerSupport";
import { getAt, setAt, type SpecObject } from "../../designer/lib/specPath";
import { CodeEditor, type CodeEditorMarker } from "../../editor/CodeEditor";
import { JudgeRewardFields } from "./JudgeRewardFields";
import { messagePosition } from "../lib/messagePosition";
import { RewardArguments } from "./RewardArguments";
import { RewardTestPanel, type TestMarker } from "./RewardTestPanel";
import { COMPLETION_TEMPLATE, CONVERSATION_TEMPLATE } from "./rewardTemplates";

const BLANK_REWARD: SpecObject = { name: "", source: { kind: "python", code: COMPLETION_TEMPLATE } };
const REWARD_SOURCE_STARTERS = {
  python: { kind: "python", code: COMPLETION_TEMPLATE },
  builtin: { kind: "builtin", name: "exact_match" },
  judge: { kind: "judge", actor: "", prompt: "Question: {{ prompt }}\nAnswer: {{ completion }}\nRate the answer from 0 to 10. Score:", parser: { kind: "number", min: 0, max: 10 } },
} as const;
const BUILTINS = ["letter_match", "exact_match", "length_penalty", "majority_vote", "debate_verdict"] as const;

/** /designer/rewards: Python reward functions written in the browser, tested on a runner. */
export function RewardsPage() {
  const trpc = useTRPC();
  const editor = usePartEditor("reward", RewardSpec, BLANK_REWARD);
  const [datasetId, setDatasetId] = useState<string | null>(null);
  const [testMarkers, setTestMarkers] = useState<TestMarker[]>([]);
  const dataset = useQuery({ ...trpc.dataset.get.queryOptions({ id: datasetId ?? "" }), enabled: datasetId !== null });

  const spec = editor.spec;
  const set = (path: string) => (value: unknown) => editor.setSpec((s) => setAt(s, path, value));
  const val = (path: string) => getAt(spec, path);
  const err = (path: string) => editor.errors[path];
  const kind = (val("source.kind") as string | undefined) ?? "python";
  const scope = ((val("scope") as string | undefined) ?? "completion") as "completion" | "conversation";
  const code = (val("source.code") as string | undefined) ?? "";
  const codeError = err("source.code");
  const noSandbox = useRunnerSupport().pythonReward;
  const markers: CodeEditorMarker[] = [
    ...testMarkers.map((m) => ({ line: m.line, column: 1, endColumn: 1000, message: m.message, severity: "error" as const })),
    ...(codeError ? [{ ...messagePosition(codeError), message: codeError, severity: "error" as const }] : []),
  ];
  const items = (editor.list.data?.items ?? []).map((p) => ({
    id: p.id,
    name: p.name,
    sub: `${(getAt(p.spec, "source.kind") as string) ?? "python"} · ${(p.spec.scope as string) ?? "completion"}`,
  }));

  return (
    <div className="parts-layout">
      <PartsList
        title="Rewards"
        items={items}
        selectedId={editor.selectedId}
        onSelect={(id) => {
          setTestMarkers([]);
          editor.select(id);
        }}
        onNew={() => editor.select(null)}
        newLabel="New reward"
        loading={editor.list.isLoading}
        empty="No rewards yet: write one in the editor."
        testId="rewards-list"
      />
      <PartEditorShell kindLabel="reward" name={String(spec.name ?? "")} editor={editor}>
        <fieldset>
          <legend>Reward</legend>
          <div className="form-grid">
            <TextField label="Name" hint="How environments refer to it, e.g. correct_answer." value={val("name") as string} onChange={set("name")} error={err("name")} testId="reward-name" />
            <SelectField
              label="Scope"
              hint="completion: one reply at a time; conversation: a whole multi-agent exchange, per actor."
              value={scope}
              options={["completion", "conversation"] as const}
              onChange={(v) => {
                set("scope")(v === "completion" ? undefined : v);
                // Swap the starter code only while it is still untouched.
                if (kind === "python" && (code === COMPLETION_TEMPLATE || code === CONVERSATION_TEMPLATE)) {
                  set("source.code")(v === "conversation" ? CONVERSATION_TEMPLATE : COMPLETION_TEMPLATE);
                }
              }}
              error={err("scope")}
            />
            <SelectField
              label="Kind"
              hint="python: your code, run out of process; builtin: one of Troupe's own; judge: a frozen actor of the run scores the reply."
              value={kind as "python" | "builtin" | "judge"}
              options={["python", "builtin", "judge"] as const}
              onChange={(v) => set("source")(REWARD_SOURCE_STARTERS[v])}
              error={err("source.kind")}
            />
            <NumberField label="Time limit (s)" hint="Per call; a call past it scores 0 and is logged." value={val("timeoutSeconds")} onChange={set("timeoutSeconds")} error={err("timeoutSeconds")} placeholder={10} />
            <NumberField label="Memory limit (MiB)" hint="Extra address space the worker process may take." value={val("memoryMb")} onChange={set("memoryMb")} error={err("memoryMb")} placeholder={512} />
          </div>
        </fieldset>

        {kind === "judge" ? (
          <JudgeRewardFields scope={scope} value={val} set={set} error={err} />
        ) : kind === "python" ? (
          <div className="reward-layout">
            <div className="form-field">
              <span className="label">Code</span>
              {noSandbox && (
                <span className="hint field-error" data-testid="reward-no-sandbox">
                  A launch with this reward is refused: {noSandbox}
                </span>
              )}
              <CodeEditor value={code} onChange={set("source.code")} language="python" markers={markers} height={300} aria-label="Reward function code" />
              {codeError ? <span className="field-error" role="alert">{codeError}</span> : null}
              <TextField label="Entrypoint" hint="The function the runtime calls." value={val("source.entrypoint") as string} onChange={set("source.entrypoint")} error={err("source.entrypoint")} placeholder="reward" />
            </div>
            <RewardArguments scope={scope} columns={dataset.data?.columns ?? []} columnTypes={dataset.data?.columnTypes ?? {}} datasetName={dataset.data?.name ?? null} />
          </div>
        ) : (
          <fieldset>
            <legend>Builtin</legend>
            <div className="form-grid">
              <SelectField label="Function" hint="letter_match: share of the reply equal to row.letter; exact_match: reply equals row.answer; length_penalty: shorter is better; majority_vote and debate_verdict (scope conversation): a vote over the actors' last answers, or the judge's verdict, decides each actor's reward (params field, extract, mode / judge)." value={val("source.name") as (typeof BUILTINS)[number]} options={BUILTINS} onChange={set("source.name")} error={err("source.name")} />
            </div>
            <ParamsField value={val("source.params")} onChange={set("source.params")} error={err("source.params")} />
          </fieldset>
        )}

        <RewardTestPanel
          reward={spec}
          rewardValid={editor.valid}
          scope={scope}
          datasetId={datasetId}
          onDatasetChange={setDatasetId}
          onMarkers={setTestMarkers}
        />
      </PartEditorShell>
    </div>
  );
}

/** Builtin parameters as a JSON object (e.g. {"field": "answer"}); the runtime checks names and types. */
function ParamsField({ value, onChange, error }: { value: unknown; onChange: (v: unknown) => void; error?: string }) {
  const id = useId();
  const [text, setText] = useState(value === undefined ? "" : JSON.stringify(value));
  const [parseError, setParseError] = useState<string | null>(null);
  return (
    <div className="form-field">
      <label htmlFor={id}>Parameters (JSON object)</label>
      <textarea
        id={id}
        rows={2}
        value={text}
        placeholder="{}"
        onChange={(e) => {
          setText(e.target.value);
          setParseError(null);
          if (e.target.value.trim() === "") return onChange(undefined);
          try {
            onChange(JSON.parse(e.target.value));
          } catch {
            // Keep the text in the spec so the schema marks the field, and say why here.
            setParseError("not valid JSON");
            onChange(e.target.value);
          }
        }}
        aria-invalid={error || parseError ? true : undefined}
      />
      <span className="hint">Empty uses the function's defaults.</span>
      {parseError ?? error ? <span className="field-error">{parseError ?? error}</span> : null}
    </div>
  );
}
