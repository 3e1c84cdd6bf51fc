import type { MetricColumns, MetricSeries } from "../server/schemas";

/** 7 significant digits: what a float32 holds, far past what a chart or its tooltip shows. */
export const chartPrecision = (v: number) => (Number.isFinite(v) ? Number(v.toPrecision(7)) : v);

/** A series in the charts' wire form (see `MetricColumns`). */
export function toColumns(series: MetricSeries): MetricColumns {
  const { points } = series;
  const value = points.map((p) => chartPrecision(p.value));
  const spread = points.some((p) => p.min !== p.value || p.max !== p.value);
  const timed = points.length > 0 && points.every((p) => p.ts !== undefined);
  return {
    name: series.name,
    actor: series.actor,
    total: series.total,
    bucketed: series.bucketed,
    step: points.map((p) => p.step),
    value,
    ...(spread ? { min: points.map((p) => chartPrecision(p.min)), max: points.map((p) => chartPrecision(p.max)) } : {}),
    ...(timed ? { ts: points.map((p) => p.ts!) } : {}),
  };
}

/** The point-per-object form the charts compute with. */
export function fromColumns(c: MetricColumns): MetricSeries {
  return {
    name: c.name,
    actor: c.actor,
    total: c.total,
    bucketed: c.bucketed,
    points: c.step.map((step, i) => ({
      step,
      value: c.value[i]!,
      min: c.min ? c.min[i]! : c.value[i]!,
      max: c.max ? c.max[i]! : c.value[i]!,
      ...(c.ts ? { ts: c.ts[i]! } : {}),
    })),
  };
}

/** react-query `select` for `run.metrics`: one stable function, so the decoded series are memoised. */
export const selectMetricSeries = (data: { series: MetricColumns[] }): MetricSeries[] => data.series.map(fromColumns);
