import { z } from "zod";
import type { Db } from "../../../server/db";
import { rebucket, totalsOf } from "../lib/offloadBuckets";
import { memoryBucketWidth } from "./memorySeries";

/**
 * The run's `offload` events (the residency manager moving an actor's training state between the device
 * and host memory) for the memory tab: a marker per move on the timeline, and per actor and direction how
 * many moves, how many bytes and how long. Read from the generic RunEvent table, as checkpoints are.
 */

export const OffloadMarker = z.object({
  actor: z.string(),
  direction: z.enum(["offload", "reload"]),
  /** One move: firstStep = lastStep and count 1; a bucket of a long run: every move of its steps. */
  firstStep: z.number().int(),
  lastStep: z.number().int(),
  count: z.number().int(),
  bytes: z.number(),
  seconds: z.number(),
  /** Of a single move only (a bucket mixes them). */
  parts: z.array(z.enum(["params", "optimizer"])).nullable(),
  phase: z.string().nullable(),
  /** Highest event seq covered: live events after it are new. */
  seq: z.number().int(),
});
export type OffloadMarker = z.infer<typeof OffloadMarker>;

export const OffloadTotal = z.object({
  actor: z.string(),
  direction: z.enum(["offload", "reload"]),
  count: z.number().int(),
  bytes: z.number(),
  seconds: z.number(),
  firstStep: z.number().int(),
  lastStep: z.number().int(),
});
export type OffloadTotal = z.infer<typeof OffloadTotal>;

export const RunOffloadsInput = z
  .object({
    runId: z.string().min(1),
    /** Most markers returned; a run with more moves gets them summed per block of steps (`bucketWidth`). */
    maxMarkers: z.number().int().min(10).max(10_000).default(2000),
  })
  .strict();

export const RunOffloadsOutput = z.object({
  markers: z.array(OffloadMarker),
  totals: z.array(OffloadTotal),
  /** 1: one marker per move; more: each marker sums one actor's moves of one direction over that many steps. */
  bucketWidth: z.number().int(),
});
export type RunOffloads = z.infer<typeof RunOffloadsOutput>;

type Direction = OffloadMarker["direction"];
const asDirection = (v: unknown): Direction => (v === "reload" ? "reload" : "offload");
const PARTS = new Set(["params", "optimizer"]);

/** Series (actor × direction) a run usually has: two actors, both directions. More only cost a merge in JS. */
const USUAL_SERIES = 4;

/**
 * Markers and totals in one scan of the run's offload events. At most `maxMarkers` markers: every move
 * when the run has few steps, else per actor and direction one marker per block of `bucketWidth` steps
 * (a power of two, as the memory series' buckets), summing its moves, so the timeline of a 100,000-step
 * run stays a few thousand marks. The width comes from the run's last step (for USUAL_SERIES series); a
 * run with more series is merged further here. Totals are the markers' sums: no move is lost.
 */
export async function loadOffloads(db: Db, runId: string, maxMarkers: number): Promise<RunOffloads> {
  const run = await db.run.findUnique({ where: { id: runId }, select: { lastStep: true } });
  let width = memoryBucketWidth(0, Math.max(0, run?.lastStep ?? 0), Math.max(1, Math.floor(maxMarkers / USUAL_SERIES)));
  // Width 1: one row per move (grouped by seq), so a move keeps what moved and its phase.
  const rows = await db.$queryRaw<Record<string, unknown>[]>`
    SELECT payload->>'actor' AS actor, payload->>'direction' AS direction,
      min((payload->>'step')::int) AS "firstStep", max((payload->>'step')::int) AS "lastStep", count(*)::int AS count,
      coalesce(sum((payload->>'bytes')::float8), 0) AS bytes, coalesce(sum((payload->>'seconds')::float8), 0) AS seconds, max(seq) AS seq,
      CASE WHEN count(*) = 1 THEN min(payload->>'phase') END AS phase, CASE WHEN count(*) = 1 THEN min((payload->'parts')::text) END AS parts
    FROM "RunEvent"
    WHERE "runId" = ${runId} AND type = 'offload'
    GROUP BY 1, 2, CASE WHEN ${width}::int = 1 THEN seq ELSE (payload->>'step')::int / ${width}::int END
    ORDER BY 4, 8`;
  let markers: OffloadMarker[] = rows.map((r) => ({
    actor: String(r.actor),
    direction: asDirection(r.direction),
    firstStep: Number(r.firstStep),
    lastStep: Number(r.lastStep),
    count: Number(r.count),
    bytes: Number(r.bytes),
    seconds: Number(r.seconds),
    parts: partsOf(r.parts),
    phase: typeof r.phase === "string" ? r.phase : null,
    seq: Number(r.seq),
  }));
  const totals = totalsOf(markers);
  while (markers.length > maxMarkers) {
    width *= 2;
    markers = rebucket(markers, width);
  }
  return { markers, totals, bucketWidth: width };
}

function partsOf(text: unknown): OffloadMarker["parts"] {
  if (typeof text !== "string") return null;
  try {
    const parts: unknown = JSON.parse(text);
    return Array.isArray(parts) && parts.length > 0 && parts.every((p) => PARTS.has(p as string)) ? (parts as ("params" | "optimizer")[]) : null;
  } catch {
    return null;
  }
}
