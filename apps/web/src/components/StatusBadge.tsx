import type { RunState } from "@troupe/contracts";

/** A run's status as a coloured word (colour from `.badge-<status>` in globals.css). */
export function StatusBadge({ status, testId }: { status: RunState; testId?: string }) {
  return (
    <span className={`badge badge-${status}`} data-testid={testId} data-status={status}>
      {status}
    </span>
  );
}
