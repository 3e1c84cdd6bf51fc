"use client";

import { Phase } from "@troupe/contracts";
import { useMemo } from "react";
import { bucketOf, type BucketedPoint } from "../../../lib/buckets";
import { mergeSeries, seriesKey, type LiveRunData } from "../../live/liveRunData";
import { MAX_SERIES_POINTS, MAX_SERIES_POINTS_LIMIT, type MemorySeries, type MetricSeries } from "../server/schemas";

export type TimedPoint = BucketedPoint & { ts?: number };

export interface MetricChartSeries {
  actor: string;
  label: string;
  points: TimedPoint[];
  /** Standard deviation at each step (reward chart band). */
  band?: BucketedPoint[];
}

export interface MemoryChartData {
  /** `samples`: points of the series, so a one-point series can be drawn as a dot. */
  /** `actor`: "" for a sample of no actor (host memory). */
  series: { key: string; phase: string; actor: string; label: string; samples: number }[];
  rows: Array<{ step: number } & Record<string, number>>;
  /** Values drawn (one per phase per step). */
  points: number;
  peakBytes: number | null;
}

const MiB = 2 ** 20;

/** Legend order: the order phases happen in a training step. */
const phaseRank = (phase: string) => {
  const i = Phase.options.indexOf(phase as Phase);
  return i === -1 ? Phase.options.length : i;
};

/**
 * One chart's series (one per actor): history merged with live points. `frozen` (a zoomed view) draws
 * the history alone, since live points fall outside the range looked at.
 */
export function metricSeries(
  name: string,
  history: MetricSeries[] | undefined,
  live: LiveRunData,
  bandName?: string,
  frozen = false,
): MetricChartSeries[] {
  const liveOf = (n: string, actor: string) => (frozen ? undefined : live.metrics.get(seriesKey(n, actor)));
  const withTime = (points: BucketedPoint[], h: MetricSeries | undefined): TimedPoint[] => {
    const ts = new Map((h?.points ?? []).map((p) => [p.step, p.ts]));
    return points.map((p) => ({ ...p, ts: ts.get(p.step) ?? live.stepTs.get(p.step) }));
  };
  const actors = new Set<string>();
  for (const s of history ?? []) if (s.name === name) actors.add(s.actor);
  if (!frozen) for (const a of live.actorsOf(name)) actors.add(a);
  const find = (n: string, actor: string) => history?.find((s) => s.name === n && s.actor === actor);
  return [...actors].sort().map((actor) => ({
    actor,
    label: actor || name,
    points: withTime(mergeSeries(find(name, actor), liveOf(name, actor), MAX_SERIES_POINTS_LIMIT), find(name, actor)),
    ...(bandName ? { band: mergeSeries(find(bandName, actor), liveOf(bandName, actor), MAX_SERIES_POINTS_LIMIT) } : {}),
  }));
}

export type MemoryField = "rssBytes" | "allocatedBytes" | "reservedBytes" | "peakBytes";

/** Memory of one device (`cpu`: host RSS; `cuda:N`: allocated, reserved or peak), one line per phase and actor. */
export function memoryChart(history: MemorySeries[] | undefined, live: LiveRunData, device = "cpu", field: MemoryField = "rssBytes"): MemoryChartData {
  // series key → seq → sample.
  const bySeries = new Map<string, { phase: string; actor: string; label: string; samples: Map<number, { step: number; rss: number }>; lastBucketedStep: number }>();
  const entry = (phase: string, actor: string) => {
    const key = actor ? `${phase}:${actor}` : phase;
    let e = bySeries.get(key);
    if (!e) bySeries.set(key, (e = { phase, actor, label: actor ? `${phase} (${actor})` : phase, samples: new Map(), lastBucketedStep: -Infinity }));
    return { key, e };
  };
  for (const s of history ?? []) {
    if (s.device !== device) continue;
    const { e } = entry(s.phase, s.actor);
    for (const p of s.points) {
      const v = p[field];
      if (v !== null) e.samples.set(p.seq, { step: p.step, rss: v });
    }
    if (s.bucketed) e.lastBucketedStep = Math.max(e.lastBucketedStep, s.points.at(-1)?.step ?? -Infinity);
  }
  for (const m of live.memory.values()) {
    const v = m[field];
    if (m.device !== device || v === null) continue;
    const { e } = entry(m.phase, m.actor);
    if (m.step <= e.lastBucketedStep) continue;
    e.samples.set(m.seq, { step: m.step, rss: v });
  }

  const rows = new Map<number, { step: number } & Record<string, number>>();
  let peak: number | null = null;
  for (const [key, e] of bySeries) {
    for (const { step, rss } of e.samples.values()) {
      const row = rows.get(step) ?? { step };
      row[key] = Math.max(row[key] ?? 0, rss / MiB);
      rows.set(step, row);
      peak = Math.max(peak ?? 0, rss);
    }
  }
  let sorted = [...rows.values()].sort((a, b) => a.step - b.step);
  if (sorted.length > MAX_SERIES_POINTS) sorted = downsampleRowsByMax(sorted, MAX_SERIES_POINTS);
  const keys = [...bySeries.keys()];
  const points = sorted.reduce((n, row) => n + keys.filter((k) => row[k] !== undefined).length, 0);
  return {
    series: [...bySeries.entries()]
      .map(([key, e]) => ({ key, phase: e.phase, actor: e.actor, label: e.label, samples: e.samples.size }))
      .sort((a, b) => phaseRank(a.phase) - phaseRank(b.phase) || a.label.localeCompare(b.label)),
    rows: sorted,
    points,
    peakBytes: peak,
  };
}

/** Rows bucketed over the step range, each key keeping its bucket's maximum (peaks matter for memory). */
function downsampleRowsByMax<R extends { step: number } & Record<string, number>>(rows: R[], maxRows: number): R[] {
  const lo = rows[0]!.step;
  const hi = rows[rows.length - 1]!.step;
  const out: R[] = [];
  let current = -1;
  for (const row of rows) {
    const b = bucketOf(row.step, lo, hi, maxRows);
    const last = out[out.length - 1];
    if (b !== current || !last) {
      out.push({ ...row });
      current = b;
      continue;
    }
    for (const [k, v] of Object.entries(row)) {
      (last as Record<string, number>)[k] = k === "step" ? v : Math.max(last[k] ?? v, v);
    }
  }
  return out;
}

/** Chart-ready series: history from tRPC merged with what arrived live. `version` changes when `live` does. */
export function useRunCharts(
  metrics: MetricSeries[] | undefined,
  memory: MemorySeries[] | undefined,
  live: LiveRunData,
  version: number,
) {
  return useMemo(
    () => ({
      reward: metricSeries("reward/mean", metrics, live, "reward/std"),
      loss: metricSeries("loss", metrics, live),
      memory: memoryChart(memory, live),
    }),
    // `live` is mutated in place; `version` is what tells us it changed.
    [metrics, memory, live, version],
  );
}
