"use client";

import { TrainingSpec } from "@troupe/contracts";
import { useRunnerSupport } from "../../hooks/useRunnerSupport";
import { NEEDS_EXTRA } from "../../lib/runnerSupport";
import { getAt, setAt, type SpecObject } from "../../lib/specPath";
import { CheckboxField, ListField, NumberField, SelectField } from "../fields";

const DEFAULTS = TrainingSpec.parse({});

/**
 * How an actor's update runs and where: training backend, precision, gradient checkpointing, what is
 * kept in host memory, and its GPUs or CPU processes. Each field's own rules (a frozen actor stays on
 * torch, GPUs or processes but not both) come from contracts' actorRules and show beside it; the
 * run-wide ones (every actor the same number of ranks) show in the experiment composer, where the
 * actors meet.
 */
export function EngineFields({
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
  // A default is stored as nothing, so the schema's default applies (and a changed default follows).
  const orDefault = <T,>(path: string, fallback: T) => (v: T) => set(path)(v === fallback ? undefined : v);
  const unavailable = useRunnerSupport();
  const gpus = val("placement.gpus");
  return (
    <>
      <fieldset>
        <legend>Training engine</legend>
        <div className="form-grid">
          <SelectField
            label="Training backend"
            hint="torch: plain torch (data parallel over several ranks); fsdp2: torch fully_shard, ZeRO-3 sharding of weights, gradients and optimizer state; deepspeed: ZeRO-3 through Accelerate."
            value={val("training.backend") as "torch" | "fsdp2" | "deepspeed" | undefined}
            defaultValue={DEFAULTS.backend}
            options={["torch", "fsdp2", "deepspeed"] as const}
            unavailable={unavailable.trainBackend}
            conditions={NEEDS_EXTRA.trainBackend}
            onChange={orDefault("training.backend", DEFAULTS.backend)}
            error={err("training.backend")}
            testId="actor-train-backend"
          />
          <SelectField
            label="Precision"
            hint="bf16: bf16 compute with fp32 master weights and optimizer state (GPUs); fp32: everything in fp32."
            value={val("training.precision") as "fp32" | "bf16" | undefined}
            defaultValue={DEFAULTS.precision}
            options={["fp32", "bf16"] as const}
            unavailable={unavailable.precision}
            onChange={orDefault("training.precision", DEFAULTS.precision)}
            error={err("training.precision")}
            testId="actor-precision"
          />
        </div>
        <div className="form-grid" style={{ marginTop: "0.5rem" }}>
          <CheckboxField
            label="Gradient checkpointing"
            hint="recompute activations in the backward pass: less memory, about 30% more compute."
            checked={Boolean(val("training.gradientCheckpointing"))}
            onChange={(v) => set("training.gradientCheckpointing")(v || undefined)}
            error={err("training.gradientCheckpointing")}
            testId="actor-grad-ckpt"
          />
          <CheckboxField
            label="Offload parameters"
            hint="kept in host memory, brought to the device only for this actor's forward and backward (fsdp2: CPU offload policy; deepspeed: offload_param)."
            checked={Boolean(val("training.offload.params"))}
            onChange={(v) => set("training.offload.params")(v || undefined)}
            error={err("training.offload.params") ?? (val("training.offload.params") && unavailable.offloadParams ? `cannot run now: ${unavailable.offloadParams}` : undefined)}
            testId="actor-offload-params"
          />
          <CheckboxField
            label="Offload optimizer state"
            hint="kept in host memory, on the device only for the optimizer step; with Adam it is 2-3× the parameters' size (deepspeed: CPU Adam)."
            checked={Boolean(val("training.offload.optimizer"))}
            onChange={(v) => set("training.offload.optimizer")(v || undefined)}
            error={err("training.offload.optimizer") ?? (val("training.offload.optimizer") && unavailable.offloadOptimizer ? `cannot run now: ${unavailable.offloadOptimizer}` : undefined)}
            testId="actor-offload-optimizer"
          />
        </div>
      </fieldset>

      <fieldset>
        <legend>Placement</legend>
        <div className="form-grid">
          <ListField
            label="GPUs"
            hint="Comma-separated GPU indices on the runner host; several shard (fsdp2, deepspeed) or replicate (torch) the actor. Empty: one of the runner's GPUs per local model (they share when it has fewer; a runner without GPUs trains a device-auto run on its CPU). Indices are the runner's own, as /runners lists them."
            value={val("placement.gpus")}
            onChange={set("placement.gpus")}
            error={err("placement.gpus") ?? err("placement.gpus.0")}
            numbers
            placeholder="e.g. 0"
            testId="actor-gpus"
          />
          {unavailable.gpus && Array.isArray(gpus) && gpus.length > 0 ? (
            <span className="field-error" data-testid="actor-gpus-unavailable">
              GPUs cannot be placed now: {unavailable.gpus}
            </span>
          ) : null}
          <NumberField
            label="CPU processes"
            hint="CPU ranks (gloo) for a host without GPUs: how the distributed path runs on CPUs. Empty: one process."
            value={val("placement.processes")}
            onChange={set("placement.processes")}
            error={err("placement.processes")}
            placeholder="1"
            testId="actor-processes"
          />
        </div>
      </fieldset>
    </>
  );
}
