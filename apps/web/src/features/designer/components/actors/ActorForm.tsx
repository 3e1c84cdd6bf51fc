"use client";

import { LOSS_TYPES, LoraSpec, SamplingSpec, TrainingSpec } from "@troupe/contracts";
import { getAt, setAt, type SpecObject } from "../../lib/specPath";
import { useRunnerSupport } from "../../hooks/useRunnerSupport";
import { CheckboxField, ListField, NumberField, SelectField, TextField } from "../fields";
import { EngineFields } from "./EngineFields";
import { SamplingFields } from "./SamplingFields";
import { VllmFields } from "./VllmFields";

const TRAINING_DEFAULTS = TrainingSpec.parse({});
const LORA_DEFAULTS = LoraSpec.parse({});
export const SAMPLING_DEFAULTS = SamplingSpec.parse({});

export const BLANK_ACTOR: SpecObject = { name: "", model: { source: "tiny", preset: "tiny-char-2l" } };

/**
 * Every field of an ActorSpec, each with a one-line explanation and its error beside it. Empty
 * number fields show the schema default as placeholder and store nothing, so the default applies.
 * Combination rules (API actors, LoRA, vLLM + tiny, …) come from contracts' actorRules.
 */
export function ActorForm({
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
  const source = (val("model.source") as string | undefined) ?? "tiny";
  const backend = (val("backend") as string | undefined) ?? "hf";
  const trainable = (val("trainable") as boolean | undefined) ?? true;
  const lora = val("training.lora") !== undefined;
  const evalSampling = val("evalSampling") !== undefined;
  const unavailable = useRunnerSupport();

  return (
    <div className="part-form-fields">
      <fieldset>
        <legend>Actor</legend>
        <div className="form-grid">
          <TextField label="Name" hint="How environments and round specs refer to this actor, e.g. Alice." value={val("name") as string} onChange={set("name")} error={err("name")} testId="actor-name" />
          <SelectField
            label="Backend"
            hint="hf: transformers generate (CPU or GPU); vllm: fast GPU rollouts; openai: any OpenAI-compatible API."
            value={backend as "hf" | "vllm" | "openai"}
            options={["hf", "vllm", "openai"] as const}
            unavailable={unavailable.actorBackend}
            onChange={set("backend")}
            error={err("backend")}
            testId="actor-backend"
          />
        </div>
        <CheckboxField
          label="Trainable"
          hint="trained by the run's algorithm; unticked, the actor is frozen (it still speaks)."
          checked={trainable}
          onChange={(v) => set("trainable")(v ? undefined : false)}
          error={err("trainable")}
          testId="actor-trainable"
        />
      </fieldset>

      <fieldset>
        <legend>Model</legend>
        <div className="form-grid">
          <SelectField
            label="Source"
            hint="tiny: built in-process (no download); huggingface: a hub id; local: a folder on the runner host; run: another run's checkpoint."
            value={source as "tiny" | "huggingface" | "local" | "run"}
            options={["tiny", "huggingface", "local", "run"] as const}
            onChange={(v) => set("model")(v === "tiny" ? { source: v, preset: "tiny-char-2l" } : { source: v })}
            error={err("model.source") ?? err("model")}
            testId="actor-model-source"
          />
          {source === "tiny" ? (
            <SelectField label="Preset" hint="A 2- or 4-layer character-level model for demos and CPU checks." value={val("model.preset") as "tiny-char-2l" | "tiny-char-4l"} options={["tiny-char-2l", "tiny-char-4l"] as const} onChange={set("model.preset")} error={err("model.preset")} />
          ) : null}
          {source === "huggingface" ? (
            <>
              <TextField label="Model id" hint="e.g. Qwen/Qwen2.5-0.5B-Instruct; read from the runner's cache when offline." value={val("model.id") as string} onChange={set("model.id")} error={err("model.id")} testId="actor-model-id" />
              <TextField label="Revision" hint="A branch, tag or commit; the default branch when empty." value={val("model.revision") as string} onChange={set("model.revision")} error={err("model.revision")} />
            </>
          ) : null}
          {source === "local" ? (
            <TextField label="Folder" hint="Absolute path on the runner host holding a Hugging Face causal LM." value={val("model.path") as string} onChange={set("model.path")} error={err("model.path")} testId="actor-model-path" />
          ) : null}
          {source === "run" ? (
            <>
              <TextField label="Run id" hint="The run whose checkpoint this actor starts from (its id is on its page)." value={val("model.runId") as string} onChange={set("model.runId")} error={err("model.runId")} testId="actor-model-run" />
              <NumberField label="Step" hint="A step that run saved a checkpoint at (its Checkpoints list)." value={val("model.step")} onChange={set("model.step")} error={err("model.step")} testId="actor-model-step" />
              <TextField label="Actor of that run" hint="Empty: the actor with this actor's name." value={val("model.actor") as string} onChange={set("model.actor")} error={err("model.actor")} />
            </>
          ) : null}
        </div>
      </fieldset>

      {backend === "openai" || val("api") !== undefined ? (
        <fieldset>
          <legend>API endpoint</legend>
          {err("api") ? <p className="field-error" role="alert">{err("api")}</p> : null}
          <div className="form-grid">
            <TextField label="Base URL" hint="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1." value={val("api.baseUrl") as string} onChange={set("api.baseUrl")} error={err("api.baseUrl")} testId="actor-api-url" />
            <TextField label="Model" hint="The model name the endpoint expects." value={val("api.model") as string} onChange={set("api.model")} error={err("api.model")} testId="actor-api-model" />
            <TextField label="API key variable" hint="Name of the runner's environment variable holding the key (never the key)." value={val("api.apiKeyEnv") as string} onChange={set("api.apiKeyEnv")} error={err("api.apiKeyEnv")} placeholder="OPENAI_API_KEY" />
            <NumberField label="Timeout (s)" hint="Per request." value={val("api.timeoutSeconds")} onChange={set("api.timeoutSeconds")} error={err("api.timeoutSeconds")} placeholder={60} />
            <NumberField label="Retries" hint="Retries of a failed request, with backoff." value={val("api.maxRetries")} onChange={set("api.maxRetries")} error={err("api.maxRetries")} placeholder={3} />
          </div>
        </fieldset>
      ) : null}

      {backend === "vllm" || val("vllm") !== undefined ? <VllmFields spec={spec} errors={errors} onChange={onChange} /> : null}

      <fieldset>
        <legend>Training {trainable ? "" : <span className="muted small">(kept, but unused while frozen)</span>}</legend>
        <div className="form-grid">
          <NumberField label="Learning rate" hint="Optimizer step size; 1e-6–1e-5 for billion-parameter models, larger for tiny ones." value={val("training.learningRate")} onChange={set("training.learningRate")} error={err("training.learningRate")} placeholder={TRAINING_DEFAULTS.learningRate} testId="actor-lr" />
          <SelectField label="Optimizer" hint="AdamW for almost everything; SGD to compare." value={val("training.optimizer") as "adamw" | "sgd"} options={["adamw", "sgd"] as const} onChange={set("training.optimizer")} error={err("training.optimizer")} />
          <NumberField label="Weight decay" hint="Decoupled L2 shrinkage of the weights each step." value={val("training.weightDecay")} onChange={set("training.weightDecay")} error={err("training.weightDecay")} placeholder={TRAINING_DEFAULTS.weightDecay} />
          <NumberField label="Adam β1" hint="Momentum of the gradient average." value={(val("training.betas") as number[] | undefined)?.[0]} onChange={(v) => set("training.betas")(v === undefined ? undefined : [v, (val("training.betas") as number[] | undefined)?.[1] ?? TRAINING_DEFAULTS.betas[1]])} error={err("training.betas.0") ?? err("training.betas")} placeholder={TRAINING_DEFAULTS.betas[0]} />
          <NumberField label="Adam β2" hint="Momentum of the squared-gradient average." value={(val("training.betas") as number[] | undefined)?.[1]} onChange={(v) => set("training.betas")(v === undefined ? undefined : [(val("training.betas") as number[] | undefined)?.[0] ?? TRAINING_DEFAULTS.betas[0], v])} error={err("training.betas.1")} placeholder={TRAINING_DEFAULTS.betas[1]} />
          <SelectField label="LR schedule" hint="How the learning rate moves over the run after warm-up." value={val("training.scheduler.type") as "constant" | "linear" | "cosine"} options={["constant", "linear", "cosine"] as const} onChange={set("training.scheduler.type")} error={err("training.scheduler.type")} />
          <NumberField label="Warm-up steps" hint="Steps of linear ramp from 0 to the learning rate." value={val("training.scheduler.warmupSteps")} onChange={set("training.scheduler.warmupSteps")} error={err("training.scheduler.warmupSteps")} placeholder={0} />
          <NumberField label="Max grad norm" hint="Gradients are clipped to this global L2 norm." value={val("training.maxGradNorm")} onChange={set("training.maxGradNorm")} error={err("training.maxGradNorm")} placeholder={TRAINING_DEFAULTS.maxGradNorm} />
          <NumberField label="KL β" hint="Weight of the KL penalty to the reference model; 0 skips the reference entirely." value={val("training.klBeta")} onChange={set("training.klBeta")} error={err("training.klBeta")} placeholder={TRAINING_DEFAULTS.klBeta} />
          <NumberField label="Clip ε low" hint="Ratio clipped below 1 − ε (PPO-style trust region)." value={val("training.clipEpsLow")} onChange={set("training.clipEpsLow")} error={err("training.clipEpsLow")} placeholder={TRAINING_DEFAULTS.clipEpsLow} />
          <NumberField label="Clip ε high" hint="Ratio clipped above 1 + ε; DAPO raises it (clip-higher) to keep exploring." value={val("training.clipEpsHigh")} onChange={set("training.clipEpsHigh")} error={err("training.clipEpsHigh")} placeholder={TRAINING_DEFAULTS.clipEpsHigh} testId="actor-clip-high" />
          <SelectField label="Loss" hint="grpo: per-sequence mean; dr_grpo: no length bias; dapo: token-level; gspo: sequence ratios." value={val("training.lossType") as "grpo"} options={LOSS_TYPES} onChange={set("training.lossType")} error={err("training.lossType")} />
          <SelectField label="Advantage normalisation" hint="Divide by the std of the group, of the batch, or not at all (Dr. GRPO)." value={val("training.advantageNorm") as "group"} options={["group", "batch", "none"] as const} onChange={set("training.advantageNorm")} error={err("training.advantageNorm")} />
          <NumberField label="Updates per batch" hint="Optimizer passes over each sampled batch (μ in GRPO); >1 makes clipping matter." value={val("training.iterationsPerBatch")} onChange={set("training.iterationsPerBatch")} error={err("training.iterationsPerBatch")} placeholder={TRAINING_DEFAULTS.iterationsPerBatch} />
        </div>
      </fieldset>

      <fieldset>
        <legend>LoRA</legend>
        <CheckboxField label="Train LoRA adapters" hint="low-rank adapters instead of all weights: far less optimizer memory." checked={lora} onChange={(v) => set("training.lora")(v ? {} : undefined)} error={err("training.lora")} testId="actor-lora" />
        {lora && unavailable.lora ? (
          <span className="field-error" data-testid="actor-lora-unavailable">
            LoRA cannot run now: {unavailable.lora}
          </span>
        ) : null}
        {lora ? (
          <div className="form-grid">
            <NumberField label="Rank" hint="Width of the low-rank update; 8–64 is usual." value={val("training.lora.rank")} onChange={set("training.lora.rank")} error={err("training.lora.rank")} placeholder={LORA_DEFAULTS.rank} />
            <NumberField label="Alpha" hint="Scale of the update is alpha / rank." value={val("training.lora.alpha")} onChange={set("training.lora.alpha")} error={err("training.lora.alpha")} placeholder={LORA_DEFAULTS.alpha} />
            <NumberField label="Dropout" hint="On the adapter input, during training only." value={val("training.lora.dropout")} onChange={set("training.lora.dropout")} error={err("training.lora.dropout")} placeholder={LORA_DEFAULTS.dropout} />
            <ListField label="Target modules" hint="Comma-separated module names that get adapters." value={val("training.lora.targetModules")} onChange={set("training.lora.targetModules")} error={err("training.lora.targetModules")} placeholder={LORA_DEFAULTS.targetModules.join(", ")} />
          </div>
        ) : null}
      </fieldset>

      <fieldset>
        <legend>Sampling</legend>
        <SamplingFields prefix="sampling" spec={spec} errors={errors} onChange={onChange} testIdPrefix="actor-sampling" />
        <CheckboxField label="Different sampling for evaluation" hint="e.g. greedy (temperature 0) evals; training sampling is unchanged." checked={evalSampling} onChange={(v) => set("evalSampling")(v ? { temperature: 0 } : undefined)} error={err("evalSampling")} />
        {evalSampling ? <SamplingFields prefix="evalSampling" spec={spec} errors={errors} onChange={onChange} /> : null}
      </fieldset>

      <EngineFields spec={spec} errors={errors} onChange={onChange} />
    </div>
  );
}
