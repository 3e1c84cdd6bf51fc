import type { OffloadEvent, RunEvent, RunState, StatusEvent } from "@troupe/contracts";
import { bucketByStep, type BucketedPoint } from "../../lib/buckets";

/**
 * What the run page has received live (SSE), kept apart from the history it loaded via tRPC.
 * Both are keyed (metrics by name+actor+step, memory by seq), so an event that is in both the
 * history and the live stream is drawn once.
 */

export interface LiveMemorySample {
  seq: number;
  step: number;
  phase: string;
  device: string;
  actor: string;
  rssBytes: number | null;
  allocatedBytes: number | null;
  reservedBytes: number | null;
  peakBytes: number | null;
}

export const seriesKey = (name: string, actor: string) => `${name}\u0000${actor}`;

export class LiveRunData {
  /** seriesKey → step → value. */
  readonly metrics = new Map<string, Map<number, number>>();
  readonly memory = new Map<number, LiveMemorySample>();
  /** Offload / reload moves by seq (markers on the memory timeline). */
  readonly offloads = new Map<number, OffloadEvent>();
  /** step → when its metrics were reported (ms), for a time x-axis. */
  readonly stepTs = new Map<number, number>();
  lastStatus: StatusEvent | null = null;
  /** Episodes or logs arrived since the last check (panels refetch). */
  episodesSeen = 0;
  /** Bumped by every batch with a metric event: charts redraw on this, not on memory or episode events. */
  metricVersion = 0;

  /** Applies events; returns true when something a chart or header shows changed. */
  apply(events: readonly RunEvent[]): boolean {
    let changed = false;
    let metrics = false;
    for (const e of events) {
      if (e.type === "metric") {
        if (!this.stepTs.has(e.step)) this.stepTs.set(e.step, e.ts);
        for (const [name, value] of Object.entries(e.values)) {
          const key = seriesKey(name, e.actor ?? "");
          let series = this.metrics.get(key);
          if (!series) this.metrics.set(key, (series = new Map()));
          series.set(e.step, value);
        }
        changed = true;
        metrics = true;
      } else if (e.type === "memory") {
        this.memory.set(e.seq, {
          seq: e.seq,
          step: e.step,
          phase: e.phase,
          device: e.device,
          actor: e.actor ?? "",
          rssBytes: e.rssBytes ?? null,
          allocatedBytes: e.allocatedBytes ?? null,
          reservedBytes: e.reservedBytes ?? null,
          peakBytes: e.peakBytes ?? null,
        });
        changed = true;
      } else if (e.type === "offload") {
        this.offloads.set(e.seq, e);
        changed = true;
      } else if (e.type === "status") {
        if (!this.lastStatus || e.seq > this.lastStatus.seq) this.lastStatus = e;
        changed = true;
      } else if (e.type === "episode") {
        this.episodesSeen += 1;
        changed = true;
      }
    }
    if (metrics) this.metricVersion += 1;
    return changed;
  }

  /** Metric names reported live (a run can start reporting a new one at any step). */
  names(): string[] {
    const names = new Set<string>();
    for (const key of this.metrics.keys()) names.add(key.split("\u0000")[0] ?? "");
    return [...names];
  }

  /** Actors that have reported metric `name` live. */
  actorsOf(name: string): string[] {
    const actors: string[] = [];
    for (const key of this.metrics.keys()) {
      const [n, actor] = key.split("\u0000");
      if (n === name) actors.push(actor ?? "");
    }
    return actors;
  }
}

export interface HistorySeries {
  bucketed: boolean;
  points: readonly BucketedPoint[];
}

/**
 * History points followed by live ones. When the history was bucketed, live points inside its step
 * range are already summarised there and are skipped; otherwise a live point replaces the stored one
 * at the same step. Capped at `maxPoints` by bucketing again.
 */
export function mergeSeries(
  history: HistorySeries | undefined,
  live: ReadonlyMap<number, number> | undefined,
  maxPoints: number,
): BucketedPoint[] {
  const byStep = new Map<number, BucketedPoint>();
  for (const p of history?.points ?? []) byStep.set(p.step, p);
  const lastHistoryStep = history?.points.at(-1)?.step ?? -Infinity;
  for (const [step, value] of live ?? []) {
    if (history?.bucketed && step <= lastHistoryStep) continue;
    byStep.set(step, { step, value, min: value, max: value });
  }
  const sorted = [...byStep.values()].sort((a, b) => a.step - b.step);
  return bucketByStep(sorted, maxPoints);
}

const stage = (s: RunState) => (s === "queued" ? 0 : s === "running" || s === "paused" ? 1 : 2);

/**
 * The status further along (queued → running/paused → an end state). The run row and the live stream don't
 * move in lockstep, so the page shows whichever is ahead and its badge never steps back. Between two
 * end states the row (the database) wins.
 */
export function furthest(live: RunState | undefined, stored: RunState | undefined): RunState | undefined {
  if (!live) return stored;
  if (!stored) return live;
  // Pause and resume go back and forth within a live run: the stream has the newer of the two.
  if (stage(live) === 1 && stage(stored) === 1) return live;
  return stage(live) > stage(stored) ? live : stored;
}
