"use client";

import { useState } from "react";
import type { useLibrary } from "../../../designer/hooks/useLibrary";
import { useRunnerSupport } from "../../../designer/hooks/useRunnerSupport";
import { NEEDS_EXTRA } from "../../../designer/lib/runnerSupport";
import { listAt, type Draft } from "../../lib/draftPath";
import { fieldDomId } from "../../lib/specIssues";
import { DraftField, IssueText, useComposer } from "./fields";

type Library = ReturnType<typeof useLibrary>;
type ListKey = "actors" | "datasets" | "rewards" | "environments";
type Entry = { name: string; spec: Record<string, unknown> };

function modelLabel(actor: Record<string, unknown>): string {
  const m = (actor.model ?? {}) as Record<string, unknown>;
  if (m.source === "tiny") return `tiny:${(m.preset as string) ?? "tiny-char-2l"}`;
  if (m.source === "run") return `run ${String(m.runId)} step ${String(m.step)}`;
  return String(m.id ?? m.path ?? "?");
}

/** Copies of library parts in the draft; editing here changes this experiment only, never the library part. */
function PartList(props: { listKey: ListKey; title: string; available: Entry[]; onAdd?(entry: Entry): Draft | null; children(item: Record<string, unknown>, index: number): React.ReactNode }) {
  const { draft, set } = useComposer();
  const items = listAt(draft, props.listKey);
  const names = new Set(items.map((i) => i.name));
  const choices = props.available.filter((a) => !names.has(a.name));
  const [choice, setChoice] = useState("");
  const picked = choices.find((c) => c.name === choice) ?? choices[0];
  return (
    <fieldset id={fieldDomId(props.listKey)} tabIndex={-1}>
      <legend>{props.title}</legend>
      <IssueText path={props.listKey} />
      {items.length === 0 && <p className="muted small">None yet: add one from the library.</p>}
      <ul className="composer-items">
        {items.map((item, i) => (
          <li key={`${String(item.name)}-${i}`} className="composer-item" id={fieldDomId(`${props.listKey}.${i}`)} tabIndex={-1}>
            <div className="composer-item-head">
              <b>{String(item.name ?? `#${i}`)}</b>
              <button
                type="button"
                className="secondary small"
                aria-label={`Remove ${String(item.name)}`}
                onClick={() => set(props.listKey, items.filter((_, k) => k !== i))}
              >
                Remove
              </button>
            </div>
            <IssueText path={`${props.listKey}.${i}`} />
            {props.children(item, i)}
          </li>
        ))}
      </ul>
      <div className="form-actions">
        <select aria-label={`${props.title} to add`} value={picked?.name ?? ""} onChange={(e) => setChoice(e.target.value)} disabled={choices.length === 0}>
          {choices.length === 0 && <option value="">(library has no other)</option>}
          {choices.map((c) => (
            <option key={c.name} value={c.name}>
              {c.name}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="secondary"
          disabled={!picked}
          data-testid={`add-${props.listKey}`}
          onClick={() => {
            if (!picked) return;
            const withRefs = props.onAdd?.(picked);
            if (withRefs) set("", withRefs);
            else set(props.listKey, [...items, structuredClone(picked.spec)]);
          }}
        >
          Add
        </button>
      </div>
    </fieldset>
  );
}

/**
 * The parts of the spec: actors, datasets, rewards, environments, each copied from the library.
 * Adding an environment also adds the actors, dataset and rewards it names when the library has
 * them, so one click gives a spec that validates.
 */
export function PartsSections({ library }: { library: Library }) {
  const { draft } = useComposer();
  const algorithm = (draft.algorithm as Record<string, unknown> | undefined)?.name;
  const unavailable = useRunnerSupport();
  const actors = library.actors.map((a) => ({ name: a.name, spec: a.spec }));
  const datasets = library.datasets.map((d) => ({ name: d.name, spec: d.spec }));
  const rewards = library.rewards.map((r) => ({ name: r.name, spec: r.spec }));
  const environments = library.environments.map((e) => ({ name: e.name, spec: e.spec }));

  function addEnvironment(env: Entry): Draft {
    const spec = env.spec as { actors?: string[]; dataset?: string; rewards?: { reward: string }[] };
    let next: Draft = { ...draft, environments: [...listAt(draft, "environments"), structuredClone(env.spec)] };
    const ensure = (key: ListKey, names: string[], pool: Entry[]) => {
      const have = new Set(listAt(next, key).map((i) => i.name));
      const added = names.filter((n) => !have.has(n)).flatMap((n) => pool.filter((p) => p.name === n).map((p) => structuredClone(p.spec)));
      if (added.length) next = { ...next, [key]: [...listAt(next, key), ...added] };
    };
    ensure("actors", spec.actors ?? [], actors);
    ensure("datasets", spec.dataset ? [spec.dataset] : [], datasets);
    ensure("rewards", (spec.rewards ?? []).map((r) => r.reward), rewards);
    return next;
  }

  return (
    <>
      <PartList listKey="actors" title="Actors" available={actors}>
        {(actor, i) => (
          <div className="form-grid">
            <span className="muted small">
              {modelLabel(actor)} · {String(actor.backend ?? "hf")}
            </span>
            {unavailable.actorBackend[String(actor.backend)] ? (
              <span className="field-error" data-testid={`actor-backend-unavailable-${i}`}>
                {String(actor.backend)} cannot run: {unavailable.actorBackend[String(actor.backend)]}
              </span>
            ) : null}
            <DraftField kind="checkbox" path={`actors.${i}.trainable`} label="Trainable" fallback={true} />
            <DraftField kind="number" path={`actors.${i}.training.learningRate`} label="Learning rate" placeholder="0.001" />
            <DraftField kind="number" path={`actors.${i}.sampling.maxNewTokens`} label="Max new tokens" placeholder="32" integer />
            <GpuListField path={`actors.${i}.placement.gpus`} />
            <DraftField
              kind="select"
              path={`actors.${i}.training.backend`}
              label="Training backend"
              options={["torch", "fsdp2", "deepspeed"]}
              fallback="torch"
              unavailable={unavailable.trainBackend}
              conditions={NEEDS_EXTRA.trainBackend}
              hint="torch: plain (data parallel); fsdp2 / deepspeed: ZeRO-3 sharded over the ranks."
            />
            <DraftField kind="select" path={`actors.${i}.training.precision`} label="Precision" options={["fp32", "bf16"]} fallback="fp32" unavailable={unavailable.precision} hint="bf16 compute, fp32 master weights." />
            <DraftField
              kind="number"
              path={`actors.${i}.placement.processes`}
              label="CPU processes"
              placeholder="1"
              integer
              hint="CPU ranks when no GPUs; every actor of a run has the same number of ranks."
            />
          </div>
        )}
      </PartList>
      <PartList listKey="datasets" title="Datasets" available={datasets}>
        {(d, i) => (
          <div className="form-grid">
            <span className="muted small">{String((d.source as Record<string, unknown> | undefined)?.kind ?? "?")}</span>
            <DraftField kind="number" path={`datasets.${i}.evalFraction`} label="Eval fraction" placeholder="0" hint="Share of rows held out for evaluation." />
          </div>
        )}
      </PartList>
      <PartList listKey="rewards" title="Rewards" available={rewards}>
        {(r) => <span className="muted small">{String((r.source as Record<string, unknown> | undefined)?.kind ?? "?")} · scope {String(r.scope ?? "completion")}</span>}
      </PartList>
      <PartList listKey="environments" title="Environments" available={environments} onAdd={addEnvironment}>
        {(env, i) => (
          <div className="form-grid">
            <span className="muted small">
              {String(env.kind ?? "single_turn")} · dataset {String(env.dataset)} · actors {((env.actors as string[]) ?? []).join(", ")}
            </span>
            <DraftField kind="text" path={`environments.${i}.roundSpec`} label="Round spec" placeholder="(single turn)" hint="Draw it on the Environments tab." />
            {algorithm === "sft" && (
              <DraftField kind="text" emptyIsUnset path={`environments.${i}.completionField`} label="Completion column" placeholder="completion" hint="sft trains on this column's text after the prompt." />
            )}
            {algorithm === "dpo" && (
              <>
                <DraftField kind="text" emptyIsUnset path={`environments.${i}.chosenField`} label="Chosen column" placeholder="chosen" hint="dpo: the preferred completion." />
                <DraftField kind="text" emptyIsUnset path={`environments.${i}.rejectedField`} label="Rejected column" placeholder="rejected" hint="dpo: the dispreferred completion." />
              </>
            )}
            <IssueText path={`environments.${i}.dataset`} />
            <IssueText path={`environments.${i}.actors`} />
          </div>
        )}
      </PartList>
    </>
  );
}

/** GPU indices as "0, 1"; empty = the runner's first free GPU. */
function GpuListField({ path }: { path: string }) {
  const { draft, set } = useComposer();
  const current = (path.split(".").reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined), draft) ?? []) as number[];
  const [text, setText] = useState(current.join(", "));
  return (
    <div className="form-field">
      <label htmlFor={fieldDomId(path)}>GPUs</label>
      <input
        id={fieldDomId(path)}
        type="text"
        value={text}
        placeholder="e.g. 0, 1"
        onChange={(e) => {
          setText(e.target.value);
          const parts = e.target.value.split(",").map((s) => s.trim()).filter(Boolean);
          set(path, parts.length ? parts.map(Number) : undefined);
        }}
      />
      <span className="hint">Devices this actor is placed on; several = sharded (ZeRO-3).</span>
      <IssueText path={path} />
    </div>
  );
}
