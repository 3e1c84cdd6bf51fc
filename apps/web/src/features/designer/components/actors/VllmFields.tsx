"use client";

import { VllmSettings } from "@troupe/contracts";
import { getAt, setAt, type SpecObject } from "../../lib/specPath";
import { CheckboxField, NumberField, SelectField } from "../fields";

const VLLM_DEFAULTS = VllmSettings.parse({});

/**
 * `actors[].vllm`: the colocated vLLM engine of a `backend: "vllm"` actor. Shown for that backend (or while
 * settings are present, so the "only used by the vllm backend" rule can be read beside them). Empty number
 * fields store nothing: the schema default applies.
 */
export function VllmFields({
  spec,
  errors,
  onChange,
}: {
  spec: SpecObject;
  errors: Record<string, string>;
  onChange: (update: (spec: SpecObject) => SpecObject) => void;
}) {
  const set = (path: string) => (value: unknown) => onChange((s) => setAt(s, path, value));
  const val = (path: string) => getAt(spec, path);
  const err = (path: string) => errors[path];
  const level = val("vllm.sleepLevel") as 0 | 1 | 2 | undefined;
  return (
    <fieldset data-testid="actor-vllm">
      <legend>vLLM engine</legend>
      {err("vllm") ? <p className="field-error" role="alert">{err("vllm")}</p> : null}
      <div className="form-grid">
        <NumberField label="GPU memory share" hint="Share of each GPU the engine may take for weights and KV cache (0–1); the trainer needs the rest." value={val("vllm.gpuMemoryUtilization")} onChange={set("vllm.gpuMemoryUtilization")} error={err("vllm.gpuMemoryUtilization")} placeholder={VLLM_DEFAULTS.gpuMemoryUtilization} testId="actor-vllm-memory" />
        <NumberField label="Tensor parallel" hint="GPUs the engine shards the model over: 1, or as many as the actor's GPUs." value={val("vllm.tensorParallel")} onChange={set("vllm.tensorParallel")} error={err("vllm.tensorParallel")} placeholder={VLLM_DEFAULTS.tensorParallel} testId="actor-vllm-tp" />
        <SelectField
          label="Sleep level"
          hint="While the actors train: 1 keeps the weights in host memory, 2 drops them (the next push refills them); both free the KV cache. 0 never sleeps: the engine keeps its GPU share (asynchronous rollouts need it, as they sample meanwhile)."
          value={level === undefined ? undefined : (String(level) as "0" | "1" | "2")}
          defaultValue={String(VLLM_DEFAULTS.sleepLevel) as "0" | "1" | "2"}
          options={["0", "1", "2"] as const}
          onChange={(v) => set("vllm.sleepLevel")(Number(v))}
          error={err("vllm.sleepLevel")}
          testId="actor-vllm-sleep"
        />
        <NumberField label="Max model length" hint="Longest prompt + completion in tokens; the model's own limit when empty." value={val("vllm.maxModelLen")} onChange={set("vllm.maxModelLen")} error={err("vllm.maxModelLen")} placeholder="model's limit" testId="actor-vllm-max-len" />
      </div>
      <CheckboxField label="Eager mode" hint="no CUDA graphs: slower sampling, faster start and less memory." checked={(val("vllm.enforceEager") as boolean | undefined) ?? VLLM_DEFAULTS.enforceEager} onChange={(v) => set("vllm.enforceEager")(v ? true : undefined)} error={err("vllm.enforceEager")} testId="actor-vllm-eager" />
    </fieldset>
  );
}
