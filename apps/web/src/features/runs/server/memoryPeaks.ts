import { z } from "zod";
import type { Db } from "../../../server/db";

/**
 * The highest memory each (device, actor, phase) reached, with the step of its highest value: the
 * table that says which phase of which actor an OOM came from.
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

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export async function loadMemoryPeaks(db: Db, runId: string): Promise<z.infer<typeof MemoryPeak>[]> {
  const rows = await db.$queryRaw<Record<string, unknown>[]>`
    SELECT device, actor, phase, count(*)::int AS samples,
      max("rssBytes")::float8 AS "rssBytes", max("allocatedBytes")::float8 AS "allocatedBytes",
      max("reservedBytes")::float8 AS "reservedBytes", max("peakBytes")::float8 AS "peakBytes",
      (array_agg(step ORDER BY coalesce("peakBytes", "allocatedBytes", "rssBytes") DESC NULLS LAST, step))[1]::int AS "atStep",
      max(step)::int AS "lastStep"
    FROM "MemorySample" WHERE "runId" = ${runId}
    GROUP BY device, actor, phase
    ORDER BY device, actor, phase`;
  return rows.map((r) => ({
    device: String(r.device),
    actor: String(r.actor),
    phase: String(r.phase),
    samples: Number(r.samples),
    rssBytes: num(r.rssBytes),
    allocatedBytes: num(r.allocatedBytes),
    reservedBytes: num(r.reservedBytes),
    peakBytes: num(r.peakBytes),
    atStep: num(r.atStep),
    lastStep: Number(r.lastStep),
  }));
}
