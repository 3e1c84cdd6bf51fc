/**
 * Deleting a run cannot be undone, so it always asks, naming the run and what goes. A plain
 * confirm, as cancelling a long run and revoking a token ask: nothing to type.
 */
export function deleteConfirmation(run: { name: string; specName: string; runnerId?: string | null; workDir?: string | null }): string {
  const files = run.workDir
    ? `Its files on runner ${run.runnerId ?? "(unknown)"} are NOT removed (this web app cannot reach that host): ${run.workDir}. Delete that folder there to free the space.`
    : "Its files, if any, stay on the runner host that ran it (this web app cannot reach them).";
  return (
    `Delete run "${run.name}" (${run.specName})?\n\n` +
    "Removed for good: its metrics, episodes (transcripts), events and checkpoint records, memory samples and logs. " +
    "Runs started from its checkpoints keep their own data.\n\n" +
    files
  );
}

/** Asks in the browser; true means go ahead. */
export function confirmDelete(run: Parameters<typeof deleteConfirmation>[0]): boolean {
  return window.confirm(deleteConfirmation(run));
}
