"use client";

import { GIB, type RunSpec } from "@troupe/contracts";
import { formatBytes } from "../../../../lib/format";
import { memoryTarget } from "../../../runs/lib/memoryTarget";
import { useLiveRunnerGpus } from "../../../runners/hooks/useLiveRunnerGpus";
import { estimateSpecMemory, type MemoryAssumptions } from "../../lib/specMemory";

const PARTS = [
  ["parameters", "Parameters"],
  ["gradients", "Gradients"],
  ["optimizer", "Optimizer state"],
  ["referenceModel", "Reference model"],
  ["kvCache", "KV cache"],
  ["activations", "Activations"],
] as const;

const gpuOf = (device: string) => device.replace(/^cuda:/, "");

/** Estimated peak memory per actor and per GPU (formulas: packages/contracts/src/memory/actorMemory.ts). */
export function MemoryEstimatePanel(props: { spec: RunSpec; assumptions: MemoryAssumptions; setAssumptions(a: MemoryAssumptions): void }) {
  const { spec, assumptions: a, setAssumptions } = props;
  // Host memory where it will train on the CPU (trainer.device cpu, or auto with no GPU on any live runner).
  const target = memoryTarget(spec, { liveRunners: useLiveRunnerGpus() });
  const onCpu = target.device === "cpu";
  const estimate = estimateSpecMemory(spec, a, target.device);
  const overflow = onCpu ? [] : estimate.devices.filter((g) => !g.fits);
  return (
    <section className="panel memory-estimate" aria-label="Memory estimate" data-testid="memory-estimate">
      <h3>Memory estimate</h3>
      <div className="form-grid">
        <div className="form-field">
          <label htmlFor="mem-gpu">GPU memory per device (GiB)</label>
          <input id="mem-gpu" type="number" min={1} value={a.gpuMemoryGiB} onChange={(e) => setAssumptions({ ...a, gpuMemoryGiB: Number(e.target.value) || 80 })} />
        </div>
        <div className="form-field">
          <label htmlFor="mem-prompt">Prompt length (tokens)</label>
          <input id="mem-prompt" type="number" min={1} value={a.promptTokens} onChange={(e) => setAssumptions({ ...a, promptTokens: Number(e.target.value) || 1 })} />
          <span className="hint">Sequence = prompt + turns × max new tokens.</span>
        </div>
      </div>
      <p className="muted small" data-testid="memory-estimate-target">
        Estimated for {onCpu ? "host memory" : "GPU memory"}: {target.why}.
      </p>
      {/* Parts as rows, actors as columns: fits the side panel for the usual one to three actors. */}
      <table className="table">
        <thead>
          <tr>
            <th />
            {estimate.actors.map((x) => (
              <th key={x.name}>{x.name}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>Parameters (count)</td>
            {estimate.actors.map((x) => (
              <td key={x.name}>
                {x.basis === "preset" || x.basis === "catalog" ? (
                  <span title={x.basis === "preset" ? "tiny preset" : "from the model catalog"}>{(x.params! / 1e6).toFixed(x.params! < 1e7 ? 3 : 1)}M</span>
                ) : (
                  <input
                    type="number"
                    aria-label={`Parameters of ${x.name} (millions)`}
                    placeholder="unknown: M"
                    style={{ width: 90 }}
                    value={a.paramsOverride[x.name] ? a.paramsOverride[x.name]! / 1e6 : ""}
                    onChange={(e) => setAssumptions({ ...a, paramsOverride: { ...a.paramsOverride, [x.name]: Number(e.target.value) * 1e6 } })}
                  />
                )}
              </td>
            ))}
          </tr>
          <tr>
            <td>Sequences × tokens</td>
            {estimate.actors.map((x) => (
              <td key={x.name}>
                {spec.trainer.promptsPerStep * spec.algorithm.groupSize} × {x.sequenceLength}
              </td>
            ))}
          </tr>
          {PARTS.map(([key, label]) => (
            <tr key={key}>
              <td>{label}</td>
              {estimate.actors.map((x) => (
                <td key={x.name}>{x.memory ? formatBytes(x.memory[key]) : "—"}</td>
              ))}
            </tr>
          ))}
          <tr>
            <td>
              <b>{onCpu ? "Worst phase, alone in host memory" : "Worst phase, alone on a GPU"}</b>
            </td>
            {estimate.actors.map((x) => (
              <td key={x.name}>
                <b>{x.memory ? formatBytes(x.memory.total) : spec.actors.find((s) => s.name === x.name)?.backend === "openai" ? "API (none here)" : "type the size"}</b>
              </td>
            ))}
          </tr>
        </tbody>
      </table>
      <ul className="gpu-loads">
        {estimate.devices.map((g) => (
          <li key={g.device} className={g.fits || onCpu ? "" : "field-error"} data-testid={onCpu ? "host-load" : `gpu-load-${gpuOf(g.device)}`}>
            {onCpu ? `Host memory: ${formatBytes(g.total)}` : `GPU ${gpuOf(g.device)}: ${formatBytes(g.total)} of ${a.gpuMemoryGiB} GiB (${Math.round((g.total / (a.gpuMemoryGiB * GIB)) * 100)}%)`} in{" "}
            {g.phaseActor ? `${g.phaseActor}'s ${g.phase}` : g.phase} — {g.actors.join(", ")}
            {g.offloaded && g.actors.length > 1 ? " (offloaded between phases: only the active actor's training state is resident)" : ""}
          </li>
        ))}
      </ul>
      {overflow.length > 0 && !onCpu && (
        <div className="form-error" role="alert" data-testid="memory-warning">
          Will not fit: GPU {overflow.map((g) => gpuOf(g.device)).join(", ")} needs more than {a.gpuMemoryGiB} GiB. Use LoRA, offload the optimizer,
          fewer prompts per step, a smaller group or more GPUs.
        </div>
      )}
      <p className="hint muted small">
        As the runtime does it: trainable weights in fp32 (bf16 is autocast), frozen actors and KL references in their precision;
        AdamW = 2 fp32 moments; fsdp2 and deepspeed shard over the run&apos;s ranks; between-phase offload keeps only the active
        actor&apos;s training state on the GPU; LoRA actors on one base share it. Activations per token and layer from the decoder&apos;s
        shape, for one micro-batch. A test holds this estimate to measured peaks; the run page shows both side by side.
      </p>
    </section>
  );
}
