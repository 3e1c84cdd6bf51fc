import type { Prisma } from "@troupe/db";
import { z } from "zod";
import { RunState } from "@troupe/contracts";
import type { Db } from "../../../server/db";
import { listMetricSeriesKeys } from "./series";
import { RunSummary } from "./schemas";
import { runSummarySelect, toRunSummary } from "./summaries";

/** Sortable columns of the runs table (each one an indexed or cheap column of Run). */
export const RUN_SORTS = ["createdAt", "name", "status", "lastStep", "startedAt", "finishedAt"] as const;

/** Columns that may be null: those sort with nulls last either way. */
const NULLABLE_SORTS = new Set<string>(["lastStep", "startedAt", "finishedAt"]);

export const RunTableInput = z
  .object({
    page: z.number().int().min(1).default(1),
    pageSize: z.number().int().min(1).max(200).default(50),
    sort: z.enum(RUN_SORTS).default("createdAt"),
    dir: z.enum(["asc", "desc"]).default("desc"),
    status: z.array(RunState).max(5).optional(),
    tag: z.string().min(1).max(64).optional(),
    experimentId: z.string().min(1).optional(),
    source: z.enum(["ui", "api", "seed"]).optional(),
    /** Name contains (case-insensitive), or the exact run id. */
    q: z.string().max(200).optional(),
  })
  .strict();
export type RunTableInput = z.infer<typeof RunTableInput>;

/** Metrics shown per actor in the table: their latest value. */
export const KEY_METRICS = ["reward/mean", "loss", "kl"] as const;

export const RunTableRow = RunSummary.extend({
  tags: z.array(z.string()),
  source: z.enum(["ui", "api", "seed"]),
  /** Latest value per metric per actor: { "reward/mean": { alice: 0.4 } }. */
  keyMetrics: z.record(z.string(), z.record(z.string(), z.number())),
  /** Highest host RSS and highest device peak seen (bytes), or null. */
  peakRssBytes: z.number().nullable(),
  peakDeviceBytes: z.number().nullable(),
});
export type RunTableRow = z.infer<typeof RunTableRow>;

export const RunTableOutput = z.object({
  items: z.array(RunTableRow),
  total: z.number().int(),
  page: z.number().int(),
  pageSize: z.number().int(),
  /** Tags in use (for the filter), most used first. */
  tags: z.array(z.string()),
});

export function runTableWhere(input: RunTableInput): Prisma.RunWhereInput {
  const q = input.q?.trim();
  return {
    ...(input.status && input.status.length > 0 ? { status: { in: input.status } } : {}),
    ...(input.tag ? { tags: { has: input.tag } } : {}),
    ...(input.experimentId ? { experimentId: input.experimentId } : {}),
    ...(input.source ? { source: input.source } : {}),
    ...(q ? { OR: [{ name: { contains: q, mode: "insensitive" } }, { id: q }] } : {}),
  };
}

/** The latest value of each key metric per actor, for a page of runs (index probes only). */
export async function keyMetricsOf(db: Db, runIds: string[]): Promise<Map<string, Record<string, Record<string, number>>>> {
  const wanted = new Set<string>(KEY_METRICS);
  const keys = (await Promise.all(runIds.map(async (runId) => (await listMetricSeriesKeys(db, runId)).map((k) => ({ runId, ...k })))))
    .flat()
    .filter((k) => wanted.has(k.name));
  const out = new Map<string, Record<string, Record<string, number>>>();
  if (keys.length === 0) return out;
  const rows = await db.$queryRaw<{ runId: string; name: string; actor: string; value: number }[]>`
    SELECT m."runId", m.name, m.actor, m.value
    FROM unnest(${keys.map((k) => k.runId)}::text[], ${keys.map((k) => k.name)}::text[], ${keys.map((k) => k.actor)}::text[], ${keys.map((k) => k.lastStep)}::int[]) AS k("runId", name, actor, step)
    JOIN "MetricPoint" m ON m."runId" = k."runId" AND m.name = k.name AND m.actor = k.actor AND m.step = k.step`;
  // Rows come back in key order (runs, then name, then actor).
  for (const r of rows) {
    const run = out.get(r.runId) ?? {};
    (run[r.name] ??= {})[r.actor] = Number(r.value);
    out.set(r.runId, run);
  }
  return out;
}

async function peaksOf(db: Db, runIds: string[]): Promise<Map<string, { rss: number | null; device: number | null }>> {
  if (runIds.length === 0) return new Map();
  const rows = await db.$queryRaw<{ runId: string; rss: number | null; device: number | null }[]>`
    SELECT "runId", max("rssBytes")::float8 AS rss, max(greatest("peakBytes", "allocatedBytes", "reservedBytes"))::float8 AS device
    FROM "MemorySample" WHERE "runId" = ANY(${runIds}::text[]) GROUP BY "runId"`;
  return new Map(rows.map((r) => [r.runId, { rss: r.rss === null ? null : Number(r.rss), device: r.device === null ? null : Number(r.device) }]));
}

/** One page of the runs table: filtered, sorted, offset-paginated, with the total for the pager. */
export async function listRunTable(db: Db, input: RunTableInput): Promise<z.infer<typeof RunTableOutput>> {
  const where = runTableWhere(input);
  const [rows, total, tagRows] = await Promise.all([
    db.run.findMany({
      where,
      select: { ...runSummarySelect, tags: true, source: true },
      // The id breaks ties, so a page boundary never repeats or skips a run.
      orderBy: [{ [input.sort]: NULLABLE_SORTS.has(input.sort) ? { sort: input.dir, nulls: "last" } : input.dir }, { id: input.dir }],
      skip: (input.page - 1) * input.pageSize,
      take: input.pageSize,
    }),
    db.run.count({ where }),
    db.$queryRaw<{ tag: string }[]>`
      SELECT t AS tag FROM "Run", unnest(tags) t GROUP BY t ORDER BY count(*) DESC, t LIMIT 50`,
  ]);
  const ids = rows.map((r) => r.id);
  const [metrics, peaks] = await Promise.all([keyMetricsOf(db, ids), peaksOf(db, ids)]);
  // The latest reward of any actor (the first actor's, when several report): the same as `lastRewards`,
  // without reading whole series.
  const rewardOf = (id: string) => Object.values(metrics.get(id)?.["reward/mean"] ?? {})[0] ?? null;
  return {
    items: rows.map((r) => ({
      ...toRunSummary(r, rewardOf(r.id)),
      tags: r.tags,
      source: r.source,
      keyMetrics: metrics.get(r.id) ?? {},
      peakRssBytes: peaks.get(r.id)?.rss ?? null,
      peakDeviceBytes: peaks.get(r.id)?.device ?? null,
    })),
    total,
    page: input.page,
    pageSize: input.pageSize,
    tags: tagRows.map((t) => t.tag),
  };
}
