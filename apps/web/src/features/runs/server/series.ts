import type { Db } from "../../../server/db";
import type { MemorySeries, MetricSeries } from "./schemas";

/**
 * Metric and memory series for charts. A series longer than `maxPoints` is bucketed in SQL over its
 * step range (same formula as `lib/buckets.ts`), so a million-step run still sends ~1000 points.
 */

interface SeriesBounds {
  name: string;
  actor: string;
  total: number;
  lo: number;
  hi: number;
}

export async function loadMetricSeries(
  db: Db,
  runId: string,
  names: string[],
  maxPoints: number,
): Promise<MetricSeries[]> {
  const bounds = await db.$queryRaw<SeriesBounds[]>`
    SELECT name, actor, count(*)::int AS total, min(step)::int AS lo, max(step)::int AS hi
    FROM "MetricPoint"
    WHERE "runId" = ${runId} AND name = ANY(${names}::text[])
    GROUP BY name, actor
    ORDER BY name, actor`;

  return Promise.all(
    bounds.map(async (b): Promise<MetricSeries> => {
      if (b.total <= maxPoints) {
        const rows = await db.metricPoint.findMany({
          where: { runId, name: b.name, actor: b.actor },
          orderBy: { step: "asc" },
          select: { step: true, value: true },
        });
        return {
          name: b.name,
          actor: b.actor,
          total: b.total,
          bucketed: false,
          points: rows.map((r) => ({ step: r.step, value: r.value, min: r.value, max: r.value })),
        };
      }
      const rows = await db.$queryRaw<{ step: number; value: number; min: number; max: number }[]>`
        SELECT max(step)::int AS step,
               (array_agg(value ORDER BY step DESC))[1] AS value,
               min(value) AS min,
               max(value) AS max
        FROM "MetricPoint"
        WHERE "runId" = ${runId} AND name = ${b.name} AND actor = ${b.actor}
        GROUP BY floor(((step - ${b.lo}::int)::float8 * ${maxPoints}::int) / (${b.hi}::int - ${b.lo}::int + 1))
        ORDER BY 1`;
      return {
        name: b.name,
        actor: b.actor,
        total: b.total,
        bucketed: true,
        points: rows.map((r) => ({ step: r.step, value: Number(r.value), min: Number(r.min), max: Number(r.max) })),
      };
    }),
  );
}

interface MemoryBounds {
  device: string;
  phase: string;
  actor: string;
  total: number;
  lo: number;
  hi: number;
}

interface MemoryRow {
  step: number;
  seq: number;
  rssBytes: number | null;
  allocatedBytes: number | null;
  reservedBytes: number | null;
  peakBytes: number | null;
}

const seriesKey = (b: MemoryBounds) => ({ device: b.device, phase: b.phase, actor: b.actor, total: b.total });

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export async function loadMemorySeries(
  db: Db,
  runId: string,
  device: string | undefined,
  maxPoints: number,
): Promise<MemorySeries[]> {
  const bounds = await db.$queryRaw<MemoryBounds[]>`
    SELECT device, phase, actor, count(*)::int AS total, min(step)::int AS lo, max(step)::int AS hi
    FROM "MemorySample"
    WHERE "runId" = ${runId} AND (${device ?? null}::text IS NULL OR device = ${device ?? null}::text)
    GROUP BY device, phase, actor
    ORDER BY device, phase, actor`;

  return Promise.all(
    bounds.map(async (b): Promise<MemorySeries> => {
      const where = { runId, device: b.device, phase: b.phase, actor: b.actor };
      if (b.total <= maxPoints) {
        const rows = await db.memorySample.findMany({ where, orderBy: { seq: "asc" } });
        return {
          ...seriesKey(b),
          bucketed: false,
          points: rows.map((r) => ({
            step: r.step,
            seq: r.seq,
            rssBytes: num(r.rssBytes),
            allocatedBytes: num(r.allocatedBytes),
            reservedBytes: num(r.reservedBytes),
            peakBytes: num(r.peakBytes),
          })),
        };
      }
      // The peak of each bucket (max per column): memory spikes matter more than averages.
      const rows = await db.$queryRaw<MemoryRow[]>`
        SELECT max(step)::int AS step, max(seq)::int AS seq,
               max("rssBytes")::float8 AS "rssBytes",
               max("allocatedBytes")::float8 AS "allocatedBytes",
               max("reservedBytes")::float8 AS "reservedBytes",
               max("peakBytes")::float8 AS "peakBytes"
        FROM "MemorySample"
        WHERE "runId" = ${runId} AND device = ${b.device} AND phase = ${b.phase} AND actor = ${b.actor}
        GROUP BY floor(((step - ${b.lo}::int)::float8 * ${maxPoints}::int) / (${b.hi}::int - ${b.lo}::int + 1))
        ORDER BY 1, 2`;
      return {
        ...seriesKey(b),
        bucketed: true,
        points: rows.map((r) => ({
          step: r.step,
          seq: r.seq,
          rssBytes: num(r.rssBytes),
          allocatedBytes: num(r.allocatedBytes),
          reservedBytes: num(r.reservedBytes),
          peakBytes: num(r.peakBytes),
        })),
      };
    }),
  );
}
