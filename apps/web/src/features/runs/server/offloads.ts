import { OffloadEvent } from "@troupe/contracts";
import { z } from "zod";
import type { Db } from "../../../server/db";
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

/** Per (actor, direction): count, bytes, seconds and step range, summed in Postgres (a long run has many moves). */
export async function loadOffloadTotals(db: Db, runId: string): Promise<OffloadTotal[]> {
  const rows = await db.$queryRaw<Record<string, unknown>[]>`
    SELECT payload->>'actor' AS actor, payload->>'direction' AS direction, count(*)::int AS count,
      coalesce(sum((payload->>'bytes')::float8), 0) AS bytes, coalesce(sum((payload->>'seconds')::float8), 0) AS seconds,
      min((payload->>'step')::int) AS "firstStep", max((payload->>'step')::int) AS "lastStep"
    FROM "RunEvent"
    WHERE "runId" = ${runId} AND type = 'offload'
    GROUP BY 1, 2
    ORDER BY 1, 2`;
  return rows.map((r) => ({
    actor: String(r.actor),
    direction: asDirection(r.direction),
    count: Number(r.count),
    bytes: Number(r.bytes),
    seconds: Number(r.seconds),
    firstStep: Number(r.firstStep),
    lastStep: Number(r.lastStep),
  }));
}

/**
 * Markers and totals. At most `maxMarkers` markers: every move when the run has that few, else per
 * actor and direction one marker per block of `bucketWidth` steps (a power of two, as the memory series'
 * buckets), summing its moves, so the timeline of a 100,000-step run stays a few thousand marks.
 */
export async function loadOffloads(db: Db, runId: string, maxMarkers: number): Promise<RunOffloads> {
  const totals = await loadOffloadTotals(db, runId);
  const moves = totals.reduce((n, t) => n + t.count, 0);
  if (moves === 0) return { markers: [], totals, bucketWidth: 1 };
  if (moves <= maxMarkers) {
    const rows = await db.runEvent.findMany({ where: { runId, type: "offload" }, orderBy: { seq: "asc" }, select: { seq: true, payload: true } });
    const markers = rows.flatMap((row): OffloadMarker[] => {
      // Stored events were validated on the way in; one that no longer parses (an older shape) is skipped, not fatal.
      const parsed = OffloadEvent.safeParse(row.payload);
      if (!parsed.success) return [];
      const e = parsed.data;
      return [
        { actor: e.actor, direction: e.direction, firstStep: e.step, lastStep: e.step, count: 1, bytes: e.bytes, seconds: e.seconds, parts: e.parts ?? null, phase: e.phase ?? null, seq: row.seq },
      ];
    });
    return { markers, totals, bucketWidth: 1 };
  }
  const lo = Math.min(...totals.map((t) => t.firstStep));
  const hi = Math.max(...totals.map((t) => t.lastStep));
  // Each (actor, direction) series gets its share of the markers.
  const width = memoryBucketWidth(lo, hi, Math.max(1, Math.floor(maxMarkers / totals.length)));
  const rows = await db.$queryRaw<Record<string, unknown>[]>`
    SELECT payload->>'actor' AS actor, payload->>'direction' AS direction,
      min((payload->>'step')::int) AS "firstStep", max((payload->>'step')::int) AS "lastStep", count(*)::int AS count,
      coalesce(sum((payload->>'bytes')::float8), 0) AS bytes, coalesce(sum((payload->>'seconds')::float8), 0) AS seconds, max(seq) AS seq
    FROM "RunEvent"
    WHERE "runId" = ${runId} AND type = 'offload'
    GROUP BY 1, 2, (payload->>'step')::int / ${width}::int
    ORDER BY 4, 1, 2`;
  const markers = rows.map((r) => ({
    actor: String(r.actor),
    direction: asDirection(r.direction),
    firstStep: Number(r.firstStep),
    lastStep: Number(r.lastStep),
    count: Number(r.count),
    bytes: Number(r.bytes),
    seconds: Number(r.seconds),
    parts: null,
    phase: null,
    seq: Number(r.seq),
  }));
  return { markers, totals, bucketWidth: width };
}
