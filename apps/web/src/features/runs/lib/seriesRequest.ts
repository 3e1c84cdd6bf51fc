import { MAX_SERIES_POINTS_LIMIT } from "../server/schemas";
import type { StepRange } from "./runView";

/**
 * What the run page asks the server for, computed the same way by the server component that
 * prefetches it and by the browser that reads it, so the browser finds the prefetched data under the
 * same query key instead of asking again.
 */

/** The cookie that remembers a chart's width in pixels, so the server buckets to it on the next load. */
export const CHART_POINTS_COOKIE = "troupe_chart_points";
/**
 * The plot width of a chart, three to a row, at the page's widest layout (any window from ~1200 px
 * up, measured in Chromium): the guess before the browser has measured one.
 */
export const DEFAULT_CHART_POINTS = 276;
const MIN_CHART_POINTS = 100;

export function clampChartPoints(points: number): number {
  return Math.min(MAX_SERIES_POINTS_LIMIT, Math.max(MIN_CHART_POINTS, Math.round(points)));
}

export function chartPointsFromCookie(value: string | undefined): number {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? clampChartPoints(n) : DEFAULT_CHART_POINTS;
}

/**
 * Points bucketed for one width still look right at a width up to 20% away (a bucket is then 0.8 to
 * 1.2 pixels); only a larger change is worth refetching every series.
 */
export function chartPointsFor(current: number, measuredWidth: number): number {
  const measured = clampChartPoints(measuredWidth);
  return Math.abs(measured - current) / current > 0.2 ? measured : current;
}

/** The run's stored metric names, as the metrics query lists them (sorted, at most 64). */
export function storedMetricNames(series: readonly { name: string }[] | undefined): string[] {
  return [...new Set((series ?? []).map((s) => s.name))].sort();
}

export function metricsQueryInput(runId: string, storedNames: readonly string[], maxPoints: number, zoom: StepRange | null) {
  return {
    runId,
    names: storedNames.length > 0 ? storedNames.slice(0, 64) : ["reward/mean"],
    maxPoints: clampChartPoints(maxPoints),
    withTime: true,
    ...(zoom ? { fromStep: zoom.from, toStep: zoom.to } : {}),
  };
}
