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

/** Bytes in binary units with three significant digits: 512 B, 3.42 MiB, 17.1 GiB, 1.50 TiB; null as "—". */
export function formatBytes(bytes: number | null): string {
  if (bytes === null || !Number.isFinite(bytes)) return "—";
  if (Math.abs(bytes) < 1024) return `${Math.round(bytes)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  // 1023.6 MiB would print as "1024 MiB": one unit up instead.
  if (Math.abs(value) >= 999.5 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const abs = Math.abs(value);
  return `${value.toFixed(abs < 10 ? 2 : abs < 100 ? 1 : 0)} ${units[unit]}`;
}
