import { z } from "zod";
import type { Db } from "../../../server/db";
import { loadMemorySummaries } from "./memorySeries";

/**
 * The highest memory each (device, actor, phase) reached, with the step of its highest value: the
 * table that says which phase of which actor an OOM came from. Read from the memory rollups' summary
 * level (a few rows per series), not from the samples.
 */
export const MemoryPeak = z.object({
  device: z.string(),
  actor: z.string(),
  phase: z.string(),
  samples: z.number().int(),
  rssBytes: z.number().nullable(),
  allocatedBytes: z.number().nullable(),
  reservedBytes: z.number().nullable(),
  peakBytes: z.number().nullable(),
  /** Step of the highest peak (device) or RSS (host). */
  atStep: z.number().int().nullable(),
  lastStep: z.number().int(),
});
export const RunMemoryPeaksOutput = z.object({ peaks: z.array(MemoryPeak) });

export async function loadMemoryPeaks(db: Db, runId: string): Promise<z.infer<typeof MemoryPeak>[]> {
  return (await loadMemorySummaries(db, runId)).map((s) => ({
    device: s.device,
    actor: s.actor,
    phase: s.phase,
    samples: s.samples,
    rssBytes: s.rssBytes,
    allocatedBytes: s.allocatedBytes,
    reservedBytes: s.reservedBytes,
    peakBytes: s.peakBytes,
    atStep: s.atStep,
    lastStep: s.lastStep,
  }));
}
