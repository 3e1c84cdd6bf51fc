import { DEFAULT_ASSUMPTIONS, estimateRunMemory, RunSpec, type RunMemoryEstimate } from "@troupe/contracts";
import { turnsOf } from "../../experiments/lib/specMemory";

/** A measured peak as the run page reads it (run.memoryPeaks). */
export interface MeasuredPeak {
  device: string;
  actor: string;
  phase: string;
  rssBytes: number | null;
  allocatedBytes: number | null;
  peakBytes: number | null;
}

export interface MemoryComparisonRow {
  device: string;
  phase: string;
  /** "" for the rollout (every sampling actor), as in memory events. */
  actor: string;
  estimate: number | null;
  measured: number | null;
  /** (estimate - measured) / measured. */
  error: number | null;
}

/** The contracts' estimate for a run's frozen spec (null for a spec this version cannot read). */
export function estimateForRun(spec: unknown, promptTokens: number, device?: "cpu" | "gpu"): RunMemoryEstimate | null {
  const parsed = RunSpec.safeParse(spec);
  if (!parsed.success) return null;
  return estimateRunMemory(parsed.data, { ...DEFAULT_ASSUMPTIONS, promptTokens }, (actor) => turnsOf(parsed.data, actor), device);
}

/** The measured figure of a peak: a phase's highest value (CUDA max allocated; host peak RSS), else what was sampled. */
export function measuredBytes(p: MeasuredPeak): number | null {
  return p.peakBytes ?? p.allocatedBytes ?? p.rssBytes;
}

/**
 * One row per estimated (device, phase, actor), beside the measured peak of the same key: the rollout,
 * each trainable actor's KL reference and update. Measured phases the estimate does not model (setup,
 * reward, checkpoint) are left out; an estimated phase not measured yet has measured null.
 */
export function compareMemory(estimate: RunMemoryEstimate | null, peaks: readonly MeasuredPeak[]): MemoryComparisonRow[] {
  if (!estimate) return [];
  const measured = new Map(peaks.map((p) => [`${p.device}|${p.phase}|${p.actor}`, measuredBytes(p)]));
  const anyMeasured = new Set(peaks.map((p) => p.device));
  return estimate.phases
    .filter((p) => anyMeasured.size === 0 || anyMeasured.has(p.device))
    .map((p) => {
      const m = measured.get(`${p.device}|${p.phase}|${p.actor}`) ?? null;
      return { device: p.device, phase: p.phase, actor: p.actor, estimate: p.total, measured: m, error: m ? (p.total - m) / m : null };
    });
}
