"use client";

import { ANSWER_EXTRACTORS, OUTCOME_SETTINGS_FIELD } from "@troupe/contracts";
import { isOutcomeKind, withOutcomeSetting } from "../lib/outcomeSettings";
import { NumberField, SelectField, TextField } from "./fields";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Draft = Record<string, any>;

const EXTRACT_LABELS: Record<(typeof ANSWER_EXTRACTORS)[number], string> = {
  text: "The whole message (trimmed, lower-case)",
  last_number: "The last number in the message",
  letter: "The first letter A-Z (multiple choice)",
};

/**
 * The settings of the outcome environments (gpu-runtime envs/majority_vote.py, envs/summary.py): where the
 * right answer is, how an answer is read, the reward weights and (summary) the summariser. Shown only for those
 * kinds; `issues` are keyed by paths relative to the environment.
 */
export function OutcomeFields(props: { kind: string; draft: Draft; set(key: string, value: unknown): void; issues: Record<string, string>; actors: string[] }) {
  const { kind, draft, set, issues } = props;
  if (!isOutcomeKind(kind)) return null;
  const field = OUTCOME_SETTINGS_FIELD[kind];
  const settings: Draft = draft[field] ?? {};
  const weights: Draft = settings.rewardWeights ?? {};
  const put = (key: string, value: unknown) => set(field, withOutcomeSetting(draft, kind, key, value)[field]);
  const putWeight = (key: string, value: unknown) => set(field, withOutcomeSetting(draft, kind, key, value, true)[field]);
  const summariser = settings.summariser ?? props.actors[props.actors.length - 1];
  return (
    <fieldset data-testid="outcome-fields">
      <legend>{kind === "majority_vote" ? "Majority vote" : "Summary"}</legend>
      <div className="form-grid">
        {kind === "summary" && (
          <SelectField
            label="Summariser"
            value={settings.summariser}
            defaultValue={props.actors[props.actors.length - 1]}
            options={props.actors.length ? props.actors : [""]}
            onChange={(v) => put("summariser", v || undefined)}
            hint="Reads every answer and writes the team's; the others answer first, none seeing another's answer. Default: the last actor."
            error={issues["summary.summariser"]}
            testId="summary-summariser"
          />
        )}
        <TextField
          label="Answer field"
          value={settings.answerField}
          placeholder="answer"
          onChange={(v) => put("answerField", v)}
          hint="Dataset column holding the right answer."
          error={issues[`${field}.answerField`]}
          testId="outcome-answer-field"
        />
        <SelectField
          label="Read the answer as"
          value={settings.extract}
          defaultValue="last_number"
          options={ANSWER_EXTRACTORS.map((value) => ({ value, label: EXTRACT_LABELS[value] }))}
          onChange={(v) => put("extract", v)}
          error={issues[`${field}.extract`]}
        />
        <NumberField
          label="Team outcome weight"
          value={weights.outcome}
          placeholder={1}
          onChange={(v) => putWeight("outcome", v)}
          hint={kind === "majority_vote" ? "× 1 when the voted answer is right (a tie decides nothing: wrong)." : "× 1 when the summary is right."}
          error={issues[`${field}.rewardWeights.outcome`] ?? issues[`${field}.rewardWeights`]}
          testId="outcome-weight-outcome"
        />
        <NumberField
          label="Own answer weight"
          value={weights.own}
          placeholder={0}
          onChange={(v) => putWeight("own", v)}
          hint="× 1 when the actor's own answer is right: each actor also learns as if alone."
          error={issues[`${field}.rewardWeights.own`]}
          testId="outcome-weight-own"
        />
      </div>
      <p className="hint muted small">
        {kind === "majority_vote"
          ? "Every actor answers once; the answer with strictly the most votes is the team's. Reported: vote/accuracy, each actor's vote/own_accuracy, vote/agreement, vote/tie_rate."
          : `Every actor but ${summariser || "the summariser"} answers once; then the summariser answers for the team. Reported: summary/accuracy, summary/vote_accuracy (what a vote would have scored), each answerer's summary/own_accuracy, summary/agreement.`}{" "}
        No reward is needed: the outcome scores each episode.
      </p>
    </fieldset>
  );
}
