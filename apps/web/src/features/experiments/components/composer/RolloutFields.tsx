"use client";

import { ASYNC_ALGORITHMS } from "@troupe/contracts";
import { getIn } from "../../lib/draftPath";
import { fieldDomId } from "../../lib/specIssues";
import { DraftField, IssueText, useComposer } from "./fields";

/** The GRPO family, the only algorithms asynchronous rollouts feed (contracts algorithms.ts). */
const ASYNC_NAMES: readonly string[] = ASYNC_ALGORITHMS;

/**
 * An optional object switched on and off by a select: "off" removes it from the spec (absent = off),
 * "on" stores `whenOn` (the schema fills the rest).
 */
function OptionalObjectSelect({ path, label, on, whenOn, hint }: { path: string; label: string; on: string; whenOn: object; hint: string }) {
  const { draft, set, issues } = useComposer();
  const id = fieldDomId(path);
  const enabled = getIn(draft, path) !== undefined;
  return (
    <div className="form-field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={enabled ? on : "off"}
        onChange={(e) => set(path, e.target.value === "off" ? undefined : whenOn)}
        {...(issues.has(path) ? { "aria-invalid": true as const, "aria-describedby": `${id}-error` } : {})}
      >
        <option value="off">off</option>
        <option value={on}>{on}</option>
      </select>
      <span className="hint">{hint}</span>
      <IssueText path={path} />
    </div>
  );
}

/** algorithm.importanceCorrection (truncated importance sampling) and algorithm.async (bounded staleness), issue 15. */
export function RolloutFields() {
  const { draft } = useComposer();
  const name = String(getIn(draft, "algorithm.name") ?? "grpo");
  const tis = getIn(draft, "algorithm.importanceCorrection") !== undefined;
  const asyncOn = getIn(draft, "algorithm.async") !== undefined;
  if (!ASYNC_NAMES.includes(name)) return null;
  return (
    <>
      <OptionalObjectSelect
        path="algorithm.importanceCorrection"
        label="Sampler correction"
        on="tis"
        whenOn={{ kind: "tis" }}
        hint="tis: weight each token's policy gradient by min(trainer/sampler probability, cap), as verl and TRL do for vLLM's bf16 sampling (reported as tis/weight_mean, tis/clipped_frac)."
      />
      {tis && (
        <DraftField kind="number" path="algorithm.importanceCorrection.cap" label="TIS cap" placeholder="2" hint="Largest weight, at least 1." />
      )}
      <OptionalObjectSelect
        path="algorithm.async"
        label="Asynchronous rollouts"
        on="on"
        whenOn={{ maxStaleness: 1 }}
        hint="Sample the next batches while this one trains (single-turn environments, one process, hf backend, torch training). Each step reports staleness/mean and staleness/max."
      />
      {asyncOn && (
        <DraftField
          kind="number"
          path="algorithm.async.maxStaleness"
          label="Max staleness"
          placeholder="1"
          integer
          hint="A sample is never more than this many updates older than the policy it trains; 0 is the synchronous loop."
        />
      )}
    </>
  );
}
