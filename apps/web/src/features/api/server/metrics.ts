import { METRICS_CSV_HEADER, type ApiMetrics } from "@troupe/contracts";
import type { Db } from "../../../server/db";
import { loadMetricSeries } from "../../runs/server/series";

/**
 * Metric series over REST, through the run page's own loader (`features/runs/server/series.ts`), so
 * a bucketed series here is exactly what the charts draw. Raw = a bucket count no series can reach.
 */

const RAW = Number.MAX_SAFE_INTEGER;

export async function loadApiMetrics(
  db: Db,
  runId: string,
  query: { name?: string[]; actor?: string; buckets?: number },
): Promise<ApiMetrics> {
  const names =
    query.name && query.name.length > 0
      ? query.name
      : (await db.$queryRaw<{ name: string }[]>`
          SELECT DISTINCT name FROM "MetricPoint" WHERE "runId" = ${runId} ORDER BY name`).map((r) => r.name);
  if (names.length === 0) return { runId, series: [] };
  const series = await loadMetricSeries(db, runId, names, query.buckets ?? RAW);
  return {
    runId,
    series: series
      .filter((s) => query.actor === undefined || s.actor === query.actor)
      .sort((a, b) => (a.name === b.name ? a.actor.localeCompare(b.actor) : a.name.localeCompare(b.name)))
      .map((s) => ({
        name: s.name,
        actor: s.actor,
        total: s.total,
        bucketed: s.bucketed,
        points: s.points.map((p) => ({ step: p.step, value: p.value, min: p.min, max: p.max })),
      })),
  };
}

/** RFC 4180 field: quoted when it holds a comma, quote or line break. */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function metricsToCsv(metrics: ApiMetrics): string {
  const lines = [METRICS_CSV_HEADER];
  for (const s of metrics.series) {
    for (const p of s.points) lines.push([s.name, s.actor, p.step, p.value, p.min, p.max].map(csvField).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}
