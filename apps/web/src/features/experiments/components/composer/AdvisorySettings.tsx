"use client";

import { ADVISORY_SETTING_SECTIONS, AdvisoriesSpec } from "@troupe/contracts";
import { DraftField, IssueText } from "./fields";

/** Every threshold's default, shown as the placeholder of an empty input (empty: the default). */
const DEFAULTS = AdvisoriesSpec.parse({}) as unknown as Record<string, Record<string, unknown> | unknown>;

const placeholderOf = (section: string, field: string): string | undefined => {
  const value = (DEFAULTS[section] as Record<string, unknown> | undefined)?.[field];
  return typeof value === "number" ? String(value) : undefined;
};

/**
 * `trainer.advisories`: the health advisories' thresholds, collapsed by default (the defaults suit most
 * runs). One line per advisory says what it catches; an empty input keeps the default shown in it.
 */
export function AdvisorySettings() {
  return (
    <details className="composer-details" data-testid="advisory-settings">
      <summary>Health advisories</summary>
      <p className="hint">
        The runtime watches each actor&apos;s metrics and transcripts and raises an advisory (run page, runs table, API) when one of these
        conditions starts. Empty fields keep the default shown.
      </p>
      <div className="form-grid">
        <DraftField kind="checkbox" path="trainer.advisories.enabled" label="Compute advisories" fallback={true} />
        <DraftField kind="number" path="trainer.advisories.window" label="Window (steps)" placeholder={String(DEFAULTS.window)} integer hint="Windowed checks compare an actor's last window with its first." />
      </div>
      {ADVISORY_SETTING_SECTIONS.map((section) => (
        <div key={section.key} className="advisory-setting" data-testid={`advisory-setting-${section.key}`}>
          <p className="hint">
            <b>{section.key}</b>: {section.catches}
          </p>
          <div className="form-grid">
            {section.fields.map((f) => (
              <DraftField
                key={f.key}
                kind="number"
                path={`trainer.advisories.${section.key}.${f.key}`}
                label={f.label}
                placeholder={placeholderOf(section.key, f.key)}
                integer={f.step === 1}
              />
            ))}
          </div>
          <IssueText path={`trainer.advisories.${section.key}`} />
        </div>
      ))}
      <IssueText path="trainer.advisories" />
    </details>
  );
}
