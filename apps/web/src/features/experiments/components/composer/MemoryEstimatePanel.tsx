"use client";

import type { RunSpec } from "@troupe/contracts";
import { formatBytes } from "../../../../lib/format";
import { GIB } from "../../lib/memoryEstimate";
import { estimateSpecMemory, type MemoryAssumptions } from "../../lib/specMemory";

const PARTS = [
  ["parameters", "Parameters"],
  ["gradients", "Gradients"],
  ["optimizer", "Optimizer state"],
  ["referenceModel", "Reference model"],
  ["kvCache", "KV cache"],
  ["activations", "Activations"],
] as const;

/** Estimated peak memory per actor and per GPU (see lib/memoryEstimate.ts for the formulas). */
export function MemoryEstimatePanel(props: { spec: RunSpec; assumptions: MemoryAssumptions; setAssumptions(a: MemoryAssumptions): void }) {
  const { spec, assumptions: a, setAssumptions } = props;
  const estimate = estimateSpecMemory(spec, a);
  const overflow = estimate.gpus.filter((g) => !g.fits);
  const onCpu = spec.trainer.device === "cpu";
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
      {onCpu && <p className="muted small">This run trains on the CPU (trainer.device is cpu): the figures show what it would need on a GPU.</p>}
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
              <b>Total per GPU</b>
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
        {estimate.gpus.map((g) => (
          <li key={g.gpu} className={g.fits ? "" : "field-error"} data-testid={`gpu-load-${g.gpu}`}>
            GPU {g.gpu}: {formatBytes(g.total)} of {a.gpuMemoryGiB} GiB ({Math.round((g.total / (a.gpuMemoryGiB * GIB)) * 100)}%) —{" "}
            {g.actors.map((x) => x.name).join(", ")}
            {g.offloaded && g.actors.length > 1 ? " (offloaded between phases: the larger of one actor's update and the rollout)" : ""}
          </li>
        ))}
      </ul>
      {overflow.length > 0 && !onCpu && (
        <div className="form-error" role="alert" data-testid="memory-warning">
          Will not fit: GPU {overflow.map((g) => g.gpu).join(", ")} needs more than {a.gpuMemoryGiB} GiB. Use LoRA, offload the optimizer,
          fewer prompts per step, a smaller group or more GPUs.
        </div>
      )}
      <p className="hint muted small">
        Weights in each actor&apos;s precision (bf16 adds an fp32 master copy); AdamW = 2 fp32 moments (8 B per trained parameter, +4
        master in bf16); activations 34·h bytes per token per layer (flash attention), 2·h with gradient checkpointing, for one
        micro-batch; a KL penalty on a full fine-tune adds a reference copy. An estimate, not a measurement: the run page shows measured
        memory by phase.
      </p>
    </section>
  );
}
