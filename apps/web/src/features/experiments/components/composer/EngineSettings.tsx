"use client";

import { useRunnerSupport } from "../../../designer/hooks/useRunnerSupport";
import { NEEDS_EXTRA } from "../../../designer/lib/runnerSupport";
import { getIn } from "../../lib/draftPath";
import { fieldDomId } from "../../lib/specIssues";
import { DraftField, IssueText, useComposer } from "./fields";

const STRATEGIES = ["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"] as const;

/**
 * `trainer.offloadBetweenPhases` is optional on purpose: absent means "on when two or more local models
 * share a device". A checkbox cannot say that, so it is a choice of three, auto storing nothing.
 */
function OffloadBetweenPhasesField() {
  const { draft, set, issues } = useComposer();
  const path = "trainer.offloadBetweenPhases";
  const value = getIn(draft, path);
  const id = fieldDomId(path);
  return (
    <div className="form-field">
      <label htmlFor={id}>Offload between phases</label>
      <select
        id={id}
        value={value === true ? "on" : value === false ? "off" : "auto"}
        onChange={(e) => set(path, e.target.value === "on" ? true : e.target.value === "off" ? false : undefined)}
        {...(issues.has(path) ? { "aria-invalid": true as const, "aria-describedby": `${id}-error` } : {})}
      >
        <option value="auto">auto</option>
        <option value="on">on</option>
        <option value="off">off</option>
      </select>
      <span className="hint">
        Move the models not in use to host memory between rollout and each actor&apos;s update, so the device holds one at a time. auto: on when two
        or more local models share a device.
      </span>
      <IssueText path={path} />
    </div>
  );
}

/** Trainer settings of the training engines (issue 14): between-phase offload, micro-batches, and where the ranks run. */
export function EngineSettings() {
  const { draft, set } = useComposer();
  const kind = getIn(draft, "cluster.kind") === "ray" ? "ray" : "local";
  const rayUnavailable = useRunnerSupport().cluster.ray;
  return (
    <fieldset>
      <legend>Training engine</legend>
      <div className="form-grid">
        <OffloadBetweenPhasesField />
        <DraftField
          kind="number"
          path="trainer.microBatchSize"
          label="Micro-batch size"
          integer
          placeholder="auto"
          hint="Sequences per forward/backward on each rank; gradients of the micro-batches accumulate to the same update with less activation memory. Empty (auto): the largest size whose activations fit the device's free memory at the update; on a CPU, the whole batch."
        />
        <div className="form-field">
          <label htmlFor={fieldDomId("cluster.kind")}>Cluster</label>
          <select
            id={fieldDomId("cluster.kind")}
            value={kind}
            // Switching back to local drops the Ray fields: they would be refused by the strict schema.
            onChange={(e) => set("cluster", e.target.value === "ray" ? { kind: "ray" } : undefined)}
          >
            <option value="local">local</option>
            <option value="ray" disabled={rayUnavailable !== undefined && kind !== "ray"}>
              {rayUnavailable !== undefined ? "ray (unavailable)" : "ray"}
            </option>
          </select>
          <span className="hint">local: the runner host launches the ranks; ray: a Ray placement group places one trainer rank per bundle, across nodes.</span>
          {rayUnavailable !== undefined ? (
            <span className="field-error" data-testid="unavailable-cluster-ray">
              ray: {rayUnavailable}
            </span>
          ) : null}
          {kind === "ray" ? (
            <span className="option-note" data-testid="note-cluster-ray">
              ray {NEEDS_EXTRA.cluster.ray}
            </span>
          ) : null}
          <IssueText path="cluster.kind" />
          <IssueText path="cluster" />
        </div>
        {kind === "ray" ? (
          <>
            <DraftField kind="text" emptyIsUnset path="cluster.address" label="Ray address" placeholder="start a local one" hint="A running cluster (auto, ray://head:10001); empty starts a local Ray for this run." />
            <DraftField kind="select" path="cluster.strategy" label="Placement strategy" options={STRATEGIES} fallback="PACK" hint="PACK fills a node before the next; SPREAD puts ranks on different nodes (STRICT_: or fail)." />
          </>
        ) : null}
      </div>
    </fieldset>
  );
}
