import type { Prisma } from "@troupe/db";
import { z } from "zod";
import { RunState } from "@troupe/contracts";
import type { Db } from "../../../server/db";
import { RunSummary } from "./schemas";
import { runSummarySelect, toRunSummary } from "./summaries";
import { MEMORY_SUMMARY_LEVEL } from "./memorySeries";

/** Metrics shown per actor in the table: their latest value. */
export const KEY_METRICS = ["reward/mean", "loss", "kl"] as const;
export type KeyMetric = (typeof KEY_METRICS)[number];

/** Columns of Run the table sorts by (indexed or cheap). */
const COLUMN_SORTS = ["createdAt", "name", "status", "lastStep", "startedAt", "finishedAt"] as const;
/** Sortable columns of the runs table: a column of Run, or the latest value of a key metric. */
export const RUN_SORTS = [...COLUMN_SORTS, ...KEY_METRICS] as const;
export type RunSort = (typeof RUN_SORTS)[number];
const isKeyMetric = (s: RunSort): s is KeyMetric => (KEY_METRICS as readonly string[]).includes(s);

/** The Run column behind each sort: the table's "name" is the run's own (generated) name. */
const SORT_COLUMN: Record<(typeof COLUMN_SORTS)[number], keyof Prisma.RunOrderByWithRelationInput> = {
  createdAt: "createdAt",
  name: "displayName",
  status: "status",
  lastStep: "lastStep",
  startedAt: "startedAt",
  finishedAt: "finishedAt",
};

/** Columns that may be null: those sort with nulls last either way. */
const NULLABLE_SORTS = new Set<string>(["lastStep", "startedAt", "finishedAt"]);

export const RunTableInput = z
  .object({
    page: z.number().int().min(1).default(1),
    pageSize: z.number().int().min(1).max(200).default(50),
    sort: z.enum(RUN_SORTS).default("createdAt"),
    dir: z.enum(["asc", "desc"]).default("desc"),
    /** With a metric sort: whose value to sort by. Absent: the run's first actor (by name) that reports it. */
    sortActor: z.string().min(1).max(128).optional(),
    status: z.array(RunState).max(5).optional(),
    tag: z.string().min(1).max(64).optional(),
    experimentId: z.string().min(1).optional(),
    source: z.enum(["ui", "api", "seed"]).optional(),
    /**
     * The run's generated name or its spec's name contains it (case-insensitive), or the run id: whole,
     * its start, or its end (the `#abcde` short id of chart legends).
     */
    q: z.string().max(200).optional(),
  })
  .strict();
export type RunTableInput = z.infer<typeof RunTableInput>;

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
    ...(q ? { OR: searchTerms(q) } : {}),
  };
}

/** Ids are matched from 3 characters on: shorter would match most runs by chance. */
const MIN_ID_PART = 3;

/**
 * What a search box can mean: part of the run's name (`otter-17`) or of its spec's name, or an id as
 * people copy it: whole, a prefix (a truncated paste), or the short id that legends and the compare
 * page show (`#` + its last 5).
 */
function searchTerms(q: string): Prisma.RunWhereInput[] {
  const terms: Prisma.RunWhereInput[] = [
    { displayName: { contains: q, mode: "insensitive" } },
    { name: { contains: q, mode: "insensitive" } },
    { id: q },
  ];
  const idPart = q.replace(/^#/, "");
  if (idPart.length >= MIN_ID_PART && /^[A-Za-z0-9_-]+$/.test(idPart)) {
    terms.push({ id: { startsWith: idPart } }, { id: { endsWith: idPart } });
  }
  return terms;
}

/**
 * The latest value of each key metric per actor, for a page of runs, in one round trip of index probes
 * on the (runId, name, actor, step) key: a skip scan finds each (run, metric)'s actors, then one
 * backward probe per actor reads its last value. No series is read, however long.
 */
export async function keyMetricsOf(db: Db, runIds: string[]): Promise<Map<string, Record<string, Record<string, number>>>> {
  const out = new Map<string, Record<string, Record<string, number>>>();
  if (runIds.length === 0) return out;
  const rows = await db.$queryRaw<{ runId: string; name: string; actor: string; value: number }[]>`
    WITH RECURSIVE a AS (
      SELECT r.id AS "runId", n.name,
        (SELECT min(m.actor) FROM "MetricPoint" m WHERE m."runId" = r.id AND m.name = n.name) AS actor
      FROM unnest(${runIds}::text[]) AS r(id), unnest(${[...KEY_METRICS]}::text[]) AS n(name)
      UNION ALL
      SELECT a."runId", a.name,
        (SELECT min(m.actor) FROM "MetricPoint" m WHERE m."runId" = a."runId" AND m.name = a.name AND m.actor > a.actor)
      FROM a WHERE a.actor IS NOT NULL
    )
    SELECT a."runId", a.name, a.actor,
      (SELECT m.value FROM "MetricPoint" m WHERE m."runId" = a."runId" AND m.name = a.name AND m.actor = a.actor ORDER BY m.step DESC LIMIT 1) AS value
    FROM a WHERE a.actor IS NOT NULL
    ORDER BY a."runId", a.name, a.actor`;
  // Actors are added in name order, so "the first actor" of a metric is the same everywhere.
  for (const r of rows) {
    if (r.value === null) continue;
    const run = out.get(r.runId) ?? {};
    (run[r.name] ??= {})[r.actor] = Number(r.value);
    out.set(r.runId, run);
  }
  return out;
}

/** Each run's highest memory, from the memory rollups' summary level (a few rows per run, not every sample). */
async function peaksOf(db: Db, runIds: string[]): Promise<Map<string, { rss: number | null; device: number | null }>> {
  if (runIds.length === 0) return new Map();
  const rows = await db.$queryRaw<{ runId: string; rss: number | null; device: number | null }[]>`
    SELECT "runId", max("rssBytes")::float8 AS rss, max(greatest("peakBytes", "allocatedBytes", "reservedBytes"))::float8 AS device
    FROM "MemoryRollup" WHERE "runId" = ANY(${runIds}::text[]) AND level = ${MEMORY_SUMMARY_LEVEL}::int GROUP BY "runId"`;
  return new Map(rows.map((r) => [r.runId, { rss: r.rss === null ? null : Number(r.rss), device: r.device === null ? null : Number(r.device) }]));
}

/**
 * One page of run ids among `runIds`, ordered by the latest value of `metric` (of `actor`, or of the
 * run's first actor by name that reports it); runs without it come last, the id breaks ties. Two index
 * probes per run on the (runId, name, actor, step) key, so 5,000 runs sort in tens of milliseconds
 * without reading their series.
 */
export async function runIdsByMetric(
  db: Db,
  runIds: string[],
  args: { metric: string; actor?: string; dir: "asc" | "desc"; skip: number; take: number },
): Promise<string[]> {
  if (runIds.length === 0) return [];
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT r.id
    FROM unnest(${runIds}::text[]) AS r(id)
    LEFT JOIN LATERAL (
      SELECT m.value FROM "MetricPoint" m
      WHERE m."runId" = r.id AND m.name = ${args.metric}
        AND m.actor = coalesce(${args.actor ?? null}::text,
          (SELECT a.actor FROM "MetricPoint" a WHERE a."runId" = r.id AND a.name = ${args.metric} ORDER BY a.actor LIMIT 1))
      ORDER BY m.step DESC LIMIT 1
    ) v ON true
    ORDER BY
      CASE WHEN ${args.dir} = 'asc' THEN v.value END ASC NULLS LAST,
      CASE WHEN ${args.dir} = 'desc' THEN v.value END DESC NULLS LAST,
      CASE WHEN ${args.dir} = 'asc' THEN r.id END ASC,
      r.id DESC
    OFFSET ${args.skip}::int LIMIT ${args.take}::int`;
  return rows.map((r) => r.id);
}

const tableSelect = { ...runSummarySelect, tags: true, source: true } as const;

/** The rows of one page: by a Run column in SQL, or by a metric (ids ranked first, then loaded). */
async function pageRows(db: Db, input: RunTableInput, where: Prisma.RunWhereInput) {
  const skip = (input.page - 1) * input.pageSize;
  const sort = input.sort;
  if (!isKeyMetric(sort)) {
    return db.run.findMany({
      where,
      select: tableSelect,
      // The id breaks ties, so a page boundary never repeats or skips a run.
      orderBy: [{ [SORT_COLUMN[sort]]: NULLABLE_SORTS.has(sort) ? { sort: input.dir, nulls: "last" } : input.dir }, { id: input.dir }],
      skip,
      take: input.pageSize,
    });
  }
  const matching = await db.run.findMany({ where, select: { id: true } });
  const ids = await runIdsByMetric(
    db,
    matching.map((r) => r.id),
    { metric: sort, actor: input.sortActor, dir: input.dir, skip, take: input.pageSize },
  );
  const byId = new Map((await db.run.findMany({ where: { id: { in: ids } }, select: tableSelect })).map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** One page of the runs table: filtered, sorted, offset-paginated, with the total for the pager. */
export async function listRunTable(db: Db, input: RunTableInput): Promise<z.infer<typeof RunTableOutput>> {
  const where = runTableWhere(input);
  const [rows, total, tagRows] = await Promise.all([
    pageRows(db, input, where),
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
