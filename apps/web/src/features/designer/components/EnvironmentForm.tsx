"use client";

import { EnvironmentSpec } from "@troupe/contracts";
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useTRPC } from "../../../trpc/react";
import type { LibraryDataset } from "../hooks/useLibrary";
import { useRunnerSupport } from "../hooks/useRunnerSupport";
import { GameRemoteFields } from "./GameRemoteFields";
import { ActingFields } from "./ActingFields";
import { isOutcomeKind } from "../lib/outcomeSettings";
import { OutcomeFields } from "./OutcomeFields";
import { RolesFields } from "./RolesFields";
import { playerNames } from "../lib/roles";
import { RoundSpecEditor } from "./roundSpec/RoundSpecEditor";
import { TemplateEditor } from "./TemplateEditor";

// A draft holds whatever has been typed so far (any shape per field); EnvironmentSpec validates it on save.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type EnvDraft = Record<string, any>;

const KINDS = [
  { value: "single_turn", label: "Single-turn", note: "One actor answers each prompt once." },
  { value: "collaborative", label: "Collaborative", note: "Actors take turns by the round spec and share the reward." },
  { value: "adversarial", label: "Adversarial", note: "Two actors: a trainable attacker, then a frozen defender (the runtime checks this)." },
  {
    value: "parallel",
    label: "Parallel",
    note: "Every actor but the last drafts an answer at the same time; the last one reads the drafts and combines them. Completion rewards score each draft and the combination.",
  },
  { value: "code", label: "Code", note: "One actor writes a program; it runs against the row's test cases in the sandbox and the failures come back for another try." },
  { value: "tools", label: "Tools", note: "One actor may call tools (calculator, sandboxed Python, your functions); results come back between its turns." },
  { value: "python", label: "Python class", note: "Your troupe.Environment subclass on the runner decides who speaks and answers between turns." },
  {
    value: "game",
    label: "Board game",
    note: "Tic-tac-toe or connect four (PettingZoo): the game speaks between moves (never trained on); win 1, draw 0, loss -1, an illegal move forfeits. Needs no reward.",
  },
  {
    value: "majority_vote",
    label: "Majority vote",
    note: "Every actor answers the same prompt alone; the answer with the most votes is the team's, and each actor's reward follows it (weights below). Needs no reward.",
  },
  {
    value: "summary",
    label: "Summary",
    note: "Every actor but the summariser answers the same prompt alone; the summariser reads the answers and writes the team's, and each actor's reward follows it (weights below). Needs no reward.",
  },
  {
    value: "remote",
    label: "Remote (HTTP)",
    note: "Each episode is a session of an environment served over HTTP (reset/step, many at once). A call that fails ends that episode: logged, trains nothing, scores the failure score.",
  },
] as const;

/** Field path → first message, for fields of this form (paths relative to the environment). */
export type IssueMap = Record<string, string>;

function FieldError({ issues, path }: { issues: IssueMap; path: string }) {
  const message = issues[path];
  return message ? (
    <span className="field-error" role="alert" data-testid={`error-${path}`}>
      {message}
    </span>
  ) : null;
}

/** Edits one environment (a RunSpec `environments[]` entry) as a draft; the page saves it. */
export function EnvironmentForm(props: {
  draft: EnvDraft;
  setDraft(next: EnvDraft): void;
  issues: IssueMap;
  actorNames: string[];
  rewardNames: string[];
  datasets: LibraryDataset[];
}) {
  const { draft, setDraft, issues } = props;
  const trpc = useTRPC();
  const set = (key: string, value: unknown) => {
    const next = { ...draft };
    if (value === undefined) delete next[key];
    else next[key] = value;
    setDraft(next);
  };
  const kind: string = draft.kind ?? "single_turn";
  const actors: string[] = Array.isArray(draft.actors) ? draft.actors : [];
  const rewards: { reward: string; weight?: number }[] = Array.isArray(draft.rewards) ? draft.rewards : [];
  const prompt: Record<string, unknown> = draft.prompt ?? {};
  const systemPrompts: Record<string, string> = draft.systemPrompts ?? {};
  // The names turns, seats and system prompts use: the roles when the environment names them, else the actors.
  const players = playerNames(draft);
  const dataset = props.datasets.find((d) => d.name === draft.dataset) ?? null;
  const preview = useQuery({
    ...trpc.dataset.preview.queryOptions({ id: dataset?.id ?? "", limit: 3 }),
    enabled: Boolean(dataset?.id),
  });
  const sampleRow = dataset?.builtinRows?.[0] ?? preview.data?.rows[0] ?? null;
  const fields = dataset?.columns ?? [];
  const maxTurns = typeof draft.maxTurns === "number" ? draft.maxTurns : 16;
  const kindNote = KINDS.find((k) => k.value === kind)?.note;
  const runnerSupport = useRunnerSupport();
  const unavailableKinds: Record<string, string> = runnerSupport.environmentKind;
  const localCheck = useMemo(() => EnvironmentSpec.safeParse(draft), [draft]);

  function toggleActor(name: string, on: boolean) {
    const next = on ? [...actors, name] : actors.filter((a) => a !== name);
    const nextPrompts = { ...systemPrompts };
    if (!on) delete nextPrompts[name];
    setDraft({ ...draft, actors: next, systemPrompts: nextPrompts });
  }
  function setReward(name: string, on: boolean, weight?: number) {
    const rest = rewards.filter((r) => r.reward !== name);
    set("rewards", on ? [...rest, { reward: name, weight: weight ?? rewards.find((r) => r.reward === name)?.weight ?? 1 }] : rest);
  }

  return (
    <div className="part-form" data-testid="environment-form">
      <fieldset>
        <legend>Environment</legend>
        <div className="form-grid">
          <div className="form-field">
            <label htmlFor="env-name">Name</label>
            <input id="env-name" type="text" value={draft.name ?? ""} onChange={(e) => set("name", e.target.value)} aria-invalid={issues.name ? true : undefined} />
            <FieldError issues={issues} path="name" />
          </div>
          <div className="form-field">
            <label htmlFor="env-kind">Kind</label>
            <select id="env-kind" value={kind} onChange={(e) => set("kind", e.target.value)}>
              {KINDS.map((k) => (
                <option key={k.value} value={k.value} disabled={unavailableKinds[k.value] !== undefined && k.value !== kind}>
                  {unavailableKinds[k.value] !== undefined ? `${k.label} (unavailable)` : k.label}
                </option>
              ))}
            </select>
            <span className="hint" data-testid="env-kind-note">
              {kindNote}
            </span>
            {Object.entries(unavailableKinds).map(([value, reason]) => (
              <span key={value} className="hint muted small" data-testid={`env-kind-unavailable-${value}`}>
                {KINDS.find((k) => k.value === value)?.label}: {reason}
              </span>
            ))}
            <FieldError issues={issues} path="kind" />
          </div>
          <div className="form-field">
            <label htmlFor="env-dataset">Dataset</label>
            <select id="env-dataset" value={draft.dataset ?? ""} onChange={(e) => set("dataset", e.target.value || undefined)} aria-invalid={issues.dataset ? true : undefined}>
              <option value="">— choose —</option>
              {props.datasets.map((d) => (
                <option key={d.name} value={d.name}>
                  {d.name}
                  {d.id ? "" : " (built in)"}
                </option>
              ))}
            </select>
            <span className="hint">Fields: {fields.length ? fields.join(", ") : "—"}</span>
            <FieldError issues={issues} path="dataset" />
          </div>
          <div className="form-field">
            <label htmlFor="env-maxturns">Max turns</label>
            <input id="env-maxturns" type="number" min={1} value={draft.maxTurns ?? ""} placeholder="16" onChange={(e) => set("maxTurns", e.target.value === "" ? undefined : Number(e.target.value))} />
            <span className="hint">An episode stops after this many turns whatever the round spec says.</span>
            <FieldError issues={issues} path="maxTurns" />
          </div>
          <div className="form-field">
            <label htmlFor="env-weight">Batch share</label>
            <input id="env-weight" type="number" min={0} step="any" value={draft.weight ?? ""} placeholder="1" onChange={(e) => set("weight", e.target.value === "" ? undefined : Number(e.target.value))} />
            <span className="hint">Relative share of each batch drawn from this environment.</span>
            <FieldError issues={issues} path="weight" />
          </div>
          <label className="form-field checkbox">
            <input type="checkbox" checked={draft.evalOnly === true} onChange={(e) => set("evalOnly", e.target.checked ? true : undefined)} data-testid="env-eval-only" />
            Eval only
            <span className="hint">
              Never trained on: every row of its dataset is evaluated every trainer.evalEvery steps (and once in a run of 0 steps), as
              eval/{draft.name || "<name>"}/… metrics.
            </span>
            <FieldError issues={issues} path="evalOnly" />
          </label>
        </div>
      </fieldset>

      <GameRemoteFields kind={kind} draft={draft} set={set} issues={issues} grpcUnavailable={runnerSupport.grpcUrl} chessUnavailable={runnerSupport.chess} />

      <ActingFields kind={kind} draft={draft} set={set} issues={issues} />

      <OutcomeFields kind={kind} draft={draft} set={set} issues={issues} actors={actors} />

      <fieldset>
        <legend>Actors and rewards</legend>
        <div className="two-col">
          <div className="form-field" role="group" aria-labelledby="env-actors-label">
            <span className="label" id="env-actors-label">
              Actors (in speaking order for the round spec&apos;s <code>*</code>)
            </span>
            {props.actorNames.length === 0 && <span className="hint">No actors yet: create them on the Actors tab.</span>}
            {[...new Set([...props.actorNames, ...actors])].map((name) => (
              <label key={name} className="form-field checkbox">
                <input type="checkbox" checked={actors.includes(name)} onChange={(e) => toggleActor(name, e.target.checked)} />
                {name}
                {actors.includes(name) && <span className="type-chip">#{actors.indexOf(name) + 1}</span>}
                {!props.actorNames.includes(name) && <span className="draft-note">not in the library</span>}
              </label>
            ))}
            <FieldError issues={issues} path="actors" />
          </div>
          <div className="form-field" role="group" aria-labelledby="env-rewards-label">
            <span className="label" id="env-rewards-label">
              Rewards and weights
            </span>
            {props.rewardNames.map((name) => {
              const current = rewards.find((r) => r.reward === name);
              return (
                <div key={name} className="form-field checkbox">
                  <label>
                    <input type="checkbox" checked={Boolean(current)} onChange={(e) => setReward(name, e.target.checked)} /> {name}
                  </label>
                  {current && (
                    <input
                      type="number"
                      step="any"
                      aria-label={`Weight of ${name}`}
                      value={current.weight ?? 1}
                      onChange={(e) => setReward(name, true, Number(e.target.value))}
                      style={{ width: 80 }}
                    />
                  )}
                </div>
              );
            })}
            <FieldError issues={issues} path="rewards" />
          </div>
        </div>
      </fieldset>

      <RolesFields kind={kind} draft={draft} setDraft={setDraft} issues={issues} actorNames={props.actorNames} />

      <fieldset>
        <legend>Prompts</legend>
        <div className="form-grid">
          <div className="form-field">
            <label htmlFor="env-prompt-field">Prompt field</label>
            <select
              id="env-prompt-field"
              value={(prompt.field as string) ?? "prompt"}
              onChange={(e) => set("prompt", { ...prompt, field: e.target.value })}
            >
              {[...new Set(["prompt", ...fields])].map((f) => (
                <option key={f} value={f}>
                  {f}
                </option>
              ))}
            </select>
            <span className="hint">Used unless a prompt template is written below.</span>
          </div>
          <label className="form-field checkbox">
            <input
              type="checkbox"
              checked={prompt.applyChatTemplate !== false}
              onChange={(e) => set("prompt", { ...prompt, applyChatTemplate: e.target.checked })}
            />
            Apply the model&apos;s chat template
          </label>
        </div>
        <div className="form-field">
          <span className="label">Prompt template (optional, Jinja over dataset fields)</span>
          <TemplateEditor
            value={(prompt.template as string) ?? ""}
            onChange={(v) => set("prompt", { ...prompt, template: v === "" ? undefined : v })}
            fields={fields}
            sampleRow={sampleRow}
            label="Prompt template"
          />
          <FieldError issues={issues} path="prompt.template" />
        </div>
        {players.map((name) => (
          <div className="form-field" key={name}>
            <span className="label">System prompt for {name}</span>
            <TemplateEditor
              value={systemPrompts[name] ?? ""}
              onChange={(v) => {
                const next = { ...systemPrompts };
                if (v === "") delete next[name];
                else next[name] = v;
                set("systemPrompts", next);
              }}
              fields={fields}
              sampleRow={sampleRow}
              label={`System prompt for ${name}`}
            />
          </div>
        ))}
        <p className="hint muted small">
          Previews render in the browser with jinja2&apos;s meaning (a missing field is an error, values print as Python prints them); the
          run renders with Python&apos;s jinja2. Macros, includes and rare filters render only there: the preview says so.
          {sampleRow ? "" : " Choose a dataset with rows to see a preview."}
        </p>
      </fieldset>

      <fieldset>
        <legend>Round spec (who speaks when)</legend>
        {kind === "single_turn" && <p className="hint muted small">A single-turn environment needs no round spec: its one actor answers once.</p>}
        {isOutcomeKind(kind) ? (
          <p className="hint muted small" data-testid="outcome-round-note">
            A {kind} environment decides who speaks: every answering actor once, none seeing another&apos;s answer
            {kind === "summary" ? ", then the summariser, who sees them all" : ""}.
          </p>
        ) : (
          <RoundSpecEditor value={draft.roundSpec ?? ""} onChange={(t) => set("roundSpec", t.trim() === "" ? undefined : t)} actors={players} maxTurns={maxTurns} />
        )}
        <FieldError issues={issues} path="roundSpec" />
      </fieldset>
      {!localCheck.success && (
        <div className="draft-note" data-testid="env-local-issues">
          Not valid yet: {localCheck.error.issues.map((i) => `${i.path.join(".") || "environment"}: ${i.message}`).join("; ")}
        </div>
      )}
    </div>
  );
}
