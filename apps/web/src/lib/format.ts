/** Small display helpers shared by pages. */

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  return `${h}h ${String(m % 60).padStart(2, "0")}m`;
}

/** Wall time a run has taken: start to finish, or start to now while it runs. */
export function runDuration(run: { startedAt: Date | null; finishedAt: Date | null }, now: number): string {
  if (!run.startedAt) return "—";
  const end = run.finishedAt ? run.finishedAt.getTime() : now;
  return formatDuration(end - run.startedAt.getTime());
}

export function formatRelative(date: Date, now: number): string {
  const s = Math.round((now - date.getTime()) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return `${s}s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  return date.toLocaleDateString();
}

export function formatDateTime(date: Date | null): string {
  return date ? date.toLocaleString() : "—";
}

export function formatMetric(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e5)) return value.toExponential(2);
  return Number(value.toFixed(digits)).toString();
}

export function formatMiB(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}
