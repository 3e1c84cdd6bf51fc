"use client";

import { fieldDomCandidates, type SpecIssue } from "../../lib/specIssues";

/** Focus the input of a field path, or the nearest parent that has one. */
export function jumpToField(path: string): void {
  for (const id of fieldDomCandidates(path)) {
    const el = document.getElementById(id);
    if (el) {
      el.scrollIntoView({ block: "center" });
      el.focus({ preventScroll: true });
      return;
    }
  }
}

/** Every problem of the draft, each a button that moves focus to its field. */
export function IssueList({ issues }: { issues: SpecIssue[] }) {
  if (issues.length === 0) {
    return (
      <p className="ok-note" data-testid="spec-valid">
        ✓ The spec is valid.
      </p>
    );
  }
  return (
    <div className="issue-list" role="region" aria-label="Problems in the spec">
      <b>
        {issues.length} problem{issues.length === 1 ? "" : "s"}
      </b>
      <ul data-testid="spec-issues">
        {issues.map((issue, i) => (
          <li key={i}>
            <button type="button" className="link-button" onClick={() => jumpToField(issue.path)}>
              <code>{issue.path}</code>
            </button>{" "}
            {issue.message}
          </li>
        ))}
      </ul>
    </div>
  );
}
