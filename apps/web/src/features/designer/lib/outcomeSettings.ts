import { OUTCOME_SETTINGS_FIELD, type OutcomeEnvironmentKind } from "@troupe/contracts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Draft = Record<string, any>;

export const isOutcomeKind = (kind: string): kind is OutcomeEnvironmentKind => kind in OUTCOME_SETTINGS_FIELD;

/**
 * The environment draft with one setting of its outcome kind (`majorityVote` / `summary`) changed; `weight`
 * names a `rewardWeights` entry instead. `undefined` removes the setting (the contracts' default applies), and
 * an empty `rewardWeights` is dropped, so a draft never carries an empty object the person did not write.
 */
export function withOutcomeSetting(draft: Draft, kind: OutcomeEnvironmentKind, key: string, value: unknown, weight = false): Draft {
  const field = OUTCOME_SETTINGS_FIELD[kind];
  const settings: Draft = { ...(draft[field] ?? {}) };
  const target: Draft = weight ? { ...(settings.rewardWeights ?? {}) } : settings;
  if (value === undefined) delete target[key];
  else target[key] = value;
  if (weight) {
    if (Object.keys(target).length) settings.rewardWeights = target;
    else delete settings.rewardWeights;
  }
  return { ...draft, [field]: settings };
}
