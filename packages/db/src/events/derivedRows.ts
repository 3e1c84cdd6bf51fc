import type { EpisodeEvent, MemoryEvent, MetricEvent, RunEvent } from "@troupe/contracts";

/**
 * Pure mapping from events to the rows derived from them. Kept apart from the writes so the
 * mapping can be read (and tested) without a database.
 */

export interface RunEventRow {
  runId: string;
  seq: number;
  type: string;
  ts: Date;
  /** The whole event as received, so `listEventsAfter` can give it back unchanged. */
  payload: RunEvent;
}

export interface MetricPointRow {
  runId: string;
  name: string;
  actor: string;
  step: number;
  value: number;
  ts: Date;
}

export interface MemorySampleRow {
  runId: string;
  seq: number;
  step: number;
  phase: string;
  device: string;
  actor: string;
  rssBytes: bigint | null;
  allocatedBytes: bigint | null;
  reservedBytes: bigint | null;
  peakBytes: bigint | null;
  ts: Date;
}

export interface EpisodeRow {
  runId: string;
  seq: number;
  step: number;
  environment: string;
  groupIndex: number;
  sampleIndex: number;
  datasetRow: number | null;
  messages: EpisodeEvent["messages"];
  reward: number;
  rewardComponents: Record<string, number>;
  advantage: number | null;
  ts: Date;
}

export interface DerivedRows {
  events: RunEventRow[];
  metrics: MetricPointRow[];
  memory: MemorySampleRow[];
  episodes: EpisodeRow[];
  maxSeq: number | null;
  /** Highest training step among events that carry one; null when none does. */
  maxStep: number | null;
}

const bytes = (n: number | undefined): bigint | null => (n === undefined ? null : BigInt(Math.round(n)));

function metricRows(runId: string, e: MetricEvent): MetricPointRow[] {
  const ts = new Date(e.ts);
  return Object.entries(e.values).map(([name, value]) => ({
    runId,
    name,
    actor: e.actor ?? "",
    step: e.step,
    value,
    ts,
  }));
}

function memoryRow(runId: string, e: MemoryEvent): MemorySampleRow {
  return {
    runId,
    seq: e.seq,
    step: e.step,
    phase: e.phase,
    device: e.device,
    actor: e.actor ?? "",
    rssBytes: bytes(e.rssBytes),
    allocatedBytes: bytes(e.allocatedBytes),
    reservedBytes: bytes(e.reservedBytes),
    peakBytes: bytes(e.peakBytes),
    ts: new Date(e.ts),
  };
}

function episodeRow(runId: string, e: EpisodeEvent): EpisodeRow {
  return {
    runId,
    seq: e.seq,
    step: e.step,
    environment: e.environment,
    groupIndex: e.group,
    sampleIndex: e.sample,
    datasetRow: e.datasetRow ?? null,
    messages: e.messages,
    reward: e.reward,
    rewardComponents: e.rewardComponents,
    advantage: e.advantage ?? null,
    ts: new Date(e.ts),
  };
}

export function deriveRows(runId: string, events: readonly RunEvent[]): DerivedRows {
  const out: DerivedRows = { events: [], metrics: [], memory: [], episodes: [], maxSeq: null, maxStep: null };
  for (const e of events) {
    out.events.push({ runId, seq: e.seq, type: e.type, ts: new Date(e.ts), payload: e });
    out.maxSeq = Math.max(out.maxSeq ?? 0, e.seq);
    if ("step" in e) out.maxStep = Math.max(out.maxStep ?? 0, e.step);
    if (e.type === "metric") out.metrics.push(...metricRows(runId, e));
    else if (e.type === "memory") out.memory.push(memoryRow(runId, e));
    else if (e.type === "episode") out.episodes.push(episodeRow(runId, e));
  }
  return out;
}
