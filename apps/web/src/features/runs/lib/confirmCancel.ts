/**
 * Cancelling throws away the training since the last checkpoint. A run that has trained for a
 * while asks first; a run just started (or queued) does not, so a misclick on a long run costs a
 * dialog and a quick cancel of a fresh one costs nothing.
 */
export const LONG_RUN_MS = 5 * 60_000;

export function cancelConfirmation(
  run: { name: string; status: string; startedAt: Date | null; lastStep?: number | null },
  now: number = Date.now(),
): string | null {
  if (run.status !== "running" && run.status !== "paused") return null;
  if (!run.startedAt || now - run.startedAt.getTime() < LONG_RUN_MS) return null;
  const minutes = Math.round((now - run.startedAt.getTime()) / 60_000);
  const steps = run.lastStep ? `${run.lastStep} steps over ` : "";
  return `Cancel "${run.name}"? It has trained ${steps}${minutes} min; what it learned since its last checkpoint is lost. ("Stop after this step" keeps a checkpoint.)`;
}

/** Asks in the browser when the run is long; true means go ahead. */
export function confirmCancel(run: Parameters<typeof cancelConfirmation>[0]): boolean {
  const question = cancelConfirmation(run);
  return question === null || window.confirm(question);
}
