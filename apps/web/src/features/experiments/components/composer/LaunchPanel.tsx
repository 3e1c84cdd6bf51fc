"use client";

import type { RunSpec } from "@troupe/contracts";
import { useState } from "react";
import { errorMessage, fieldIssuesOf } from "../../../../trpc/errors";
import { estimateSpecMemory, type MemoryAssumptions } from "../../lib/specMemory";
import { useRoleRefusal } from "../../../auth/components/CurrentUser";
import { claimedGpusIssue } from "../../../runs/lib/gpusFor";

/** Priority, GPU count and the launch button; refuses while the spec has problems and warns when memory will not fit. */
export function LaunchPanel(props: {
  spec: RunSpec | null;
  assumptions: MemoryAssumptions;
  pending: boolean;
  error: unknown;
  onLaunch(args: { priority: number; gpus?: number }): void;
}) {
  const [priority, setPriority] = useState("0");
  const [gpus, setGpus] = useState("");
  const [anyway, setAnyway] = useState(false);
  const spec = props.spec;
  const placementGpus = spec && spec.trainer.device !== "cpu" ? new Set(spec.actors.flatMap((a) => a.placement.gpus)).size : 0;
  const tooBig =
    spec !== null && spec.trainer.device !== "cpu" && estimateSpecMemory(spec, props.assumptions).devices.some((g) => !g.fits);
  const issues = fieldIssuesOf(props.error);
  // The launch's own GPU-count check, before the click (a CPU run claiming GPUs, fewer than the placement).
  const requestedGpus = gpus.trim() !== "" && Number.isFinite(Number(gpus)) ? Number(gpus) : undefined;
  const localGpuIssue = spec ? claimedGpusIssue(spec, requestedGpus) : null;
  const gpuIssue = localGpuIssue ?? issues.find((i) => i.path === "gpus");
  const refused = useRoleRefusal("experiment.launch");
  const blocked = !spec || (tooBig && !anyway) || props.pending || refused !== null || localGpuIssue !== null;

  return (
    <section className="panel" aria-label="Launch">
      <h3>Launch</h3>
      <div className="form-grid">
        <div className="form-field">
          <label htmlFor="launch-priority">Priority (0–100)</label>
          <input id="launch-priority" type="number" min={0} max={100} value={priority} onChange={(e) => setPriority(e.target.value)} data-testid="compose-priority" />
          <span className="hint">Higher is claimed sooner by a runner.</span>
        </div>
        <div className="form-field">
          <label htmlFor="launch-gpus">GPUs</label>
          <input
            id="launch-gpus"
            type="number"
            min={0}
            value={gpus}
            placeholder={String(placementGpus)}
            onChange={(e) => setGpus(e.target.value)}
            aria-invalid={gpuIssue ? true : undefined}
            aria-describedby={gpuIssue ? "launch-gpus-issue" : undefined}
            data-testid="compose-gpus"
          />
          <span className="hint">GPUs the run claims; empty = those its actors are placed on ({placementGpus}).</span>
          {gpuIssue && (
            <span className="field-error" id="launch-gpus-issue" data-testid="compose-gpus-issue">
              {gpuIssue.message}
            </span>
          )}
        </div>
      </div>
      {tooBig && (
        <label className="form-field checkbox draft-note">
          <input type="checkbox" checked={anyway} onChange={(e) => setAnyway(e.target.checked)} />
          The memory estimate says this will not fit; launch anyway
        </label>
      )}
      {!spec && <p className="draft-note">Fix the problems listed above to launch.</p>}
      {refused && (
        <p className="draft-note" data-testid="launch-refused">
          {refused}
        </p>
      )}
      {Boolean(props.error) && !gpuIssue && (
        <div className="form-error" role="alert">
          {errorMessage(props.error)}
        </div>
      )}
      <button
        type="button"
        disabled={blocked}
        title={refused ?? undefined}
        data-testid="compose-launch"
        onClick={() => props.onLaunch({ priority: Number(priority) || 0, ...(gpus.trim() !== "" ? { gpus: Number(gpus) } : {}) })}
      >
        {props.pending ? "Launching…" : "Save and launch"}
      </button>
    </section>
  );
}
