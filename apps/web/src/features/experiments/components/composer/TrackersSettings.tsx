"use client";

import { TRACKER_KINDS, type TrackerSpec } from "@troupe/contracts";
import { useRunnerSupport } from "../../../designer/hooks/useRunnerSupport";
import { getIn } from "../../lib/draftPath";
import { DraftField, IssueText, useComposer } from "./fields";

const LABEL: Record<(typeof TRACKER_KINDS)[number], string> = { wandb: "W&B", tensorboard: "TensorBoard" };
const FIRST: Record<(typeof TRACKER_KINDS)[number], TrackerSpec> = {
  wandb: { kind: "wandb", project: "troupe", mode: "offline", dir: "wandb" },
  tensorboard: { kind: "tensorboard", dir: "tensorboard" },
};

/**
 * `trainer.trackers`: mirror the run to W&B and TensorBoard beside the dashboard (every metric, the spec as
 * config, transcripts as a table). A kind no live runner has the package for is offered disabled, with why.
 */
export function TrackersSettings() {
  const { draft, set } = useComposer();
  const raw = getIn(draft, "trainer.trackers");
  const trackers: TrackerSpec[] = Array.isArray(raw) ? (raw as TrackerSpec[]) : [];
  const unavailable = useRunnerSupport().tracker;
  const write = (next: TrackerSpec[]) => set("trainer.trackers", next.length > 0 ? next : undefined);
  return (
    <fieldset data-testid="trackers">
      <legend>Trackers</legend>
      <p className="hint">Mirror this run to W&amp;B or TensorBoard: every metric (as actor/name), the spec as config, transcripts as a table. Files go under the run folder.</p>
      {trackers.map((t, i) => (
        <div className="form-grid" key={i} data-testid={`tracker-${i}`}>
          <div className="composer-item-head">
            <b>{LABEL[t.kind]}</b>
            <button type="button" className="secondary small" onClick={() => write(trackers.filter((_, j) => j !== i))} aria-label={`Remove the ${LABEL[t.kind]} tracker`}>
              Remove
            </button>
            <IssueText path={`trainer.trackers.${i}.kind`} />
          </div>
          {t.kind === "wandb" ? (
            <>
              <DraftField kind="text" path={`trainer.trackers.${i}.project`} label="W&B project" placeholder="troupe" />
              <DraftField
                kind="select"
                path={`trainer.trackers.${i}.mode`}
                label="W&B mode"
                options={["offline", "online"]}
                fallback="offline"
                hint="offline: run files under the run folder (wandb sync uploads them); online: streams with the runner's WANDB_API_KEY."
              />
              <DraftField kind="text" emptyIsUnset path={`trainer.trackers.${i}.entity`} label="W&B entity" placeholder="your default" />
            </>
          ) : null}
          <DraftField kind="text" emptyIsUnset path={`trainer.trackers.${i}.dir`} label="Folder" placeholder={t.kind} hint="Inside the run folder." />
        </div>
      ))}
      <div className="form-field">
        {TRACKER_KINDS.map((kind) => {
          const reason = unavailable[kind];
          const taken = trackers.some((t) => t.kind === kind);
          return (
            <span key={kind}>
              <button type="button" className="secondary" disabled={reason !== undefined || taken} onClick={() => write([...trackers, FIRST[kind]])}>
                + {LABEL[kind]}
              </button>
              {reason !== undefined ? (
                <span className="field-error" data-testid={`unavailable-tracker-${kind}`}>
                  {LABEL[kind]}: {reason}
                </span>
              ) : null}
            </span>
          );
        })}
      </div>
      <IssueText path="trainer.trackers" />
    </fieldset>
  );
}
