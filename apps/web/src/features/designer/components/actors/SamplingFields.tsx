"use client";

import { SamplingSpec } from "@troupe/contracts";
import { getAt, setAt, type SpecObject } from "../../lib/specPath";
import { NumberField } from "../fields";

const DEFAULTS = SamplingSpec.parse({});

/** Temperature, top-p, top-k and length for `sampling` or `evalSampling`. */
export function SamplingFields({
  prefix,
  spec,
  errors,
  onChange,
  testIdPrefix,
}: {
  prefix: "sampling" | "evalSampling";
  spec: SpecObject;
  errors: Record<string, string>;
  onChange: (update: (spec: SpecObject) => SpecObject) => void;
  testIdPrefix?: string;
}) {
  const set = (field: string) => (value: unknown) => onChange((s) => setAt(s, `${prefix}.${field}`, value));
  const val = (field: string) => getAt(spec, `${prefix}.${field}`);
  const err = (field: string) => errors[`${prefix}.${field}`];
  return (
    <div className="form-grid">
      <NumberField label="Temperature" hint="Randomness of sampling; 0 is greedy (fine for evals, useless for GRPO)." value={val("temperature")} onChange={set("temperature")} error={err("temperature")} placeholder={DEFAULTS.temperature} testId={testIdPrefix ? `${testIdPrefix}-temperature` : undefined} />
      <NumberField label="Top-p" hint="Sample from the smallest set of tokens holding this probability." value={val("topP")} onChange={set("topP")} error={err("topP")} placeholder={DEFAULTS.topP} />
      <NumberField label="Top-k" hint="Sample among the k likeliest tokens; 0 turns it off." value={val("topK")} onChange={set("topK")} error={err("topK")} placeholder={DEFAULTS.topK} />
      <NumberField label="Max new tokens" hint="Longest reply per turn; longer ones are cut (see algorithm.overlong)." value={val("maxNewTokens")} onChange={set("maxNewTokens")} error={err("maxNewTokens")} placeholder={DEFAULTS.maxNewTokens} />
    </div>
  );
}
