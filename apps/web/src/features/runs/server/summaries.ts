import type { Prisma } from "@troupe/db";
import type { Db } from "../../../server/db";
import type { RunSummary } from "./schemas";

export const runSummarySelect = {
  id: true,
  name: true,
  displayName: true,
  status: true,
  experimentId: true,
  experiment: { select: { name: true } },
  createdAt: true,
  startedAt: true,
  finishedAt: true,
  lastStep: true,
  spec: true,
} satisfies Prisma.RunSelect;

type RunSummaryRow = Prisma.RunGetPayload<{ select: typeof runSummarySelect }>;

/** `trainer.steps` from a frozen spec, without trusting its shape. */
export function totalStepsOf(spec: unknown): number | null {
  if (typeof spec !== "object" || spec === null) return null;
  const trainer = (spec as { trainer?: unknown }).trainer;
  if (typeof trainer !== "object" || trainer === null) return null;
  const steps = (trainer as { steps?: unknown }).steps;
  return typeof steps === "number" && Number.isInteger(steps) ? steps : null;
}

/** The latest `reward/mean` of each run (one index range scan per run, newest step first). */
export async function lastRewards(db: Db, runIds: string[]): Promise<Map<string, number>> {
  if (runIds.length === 0) return new Map();
  // From the widest rollup blocks (16^5 steps, kept by the MetricPoint trigger): their last value
  // is the series' value at its last step. The same question asked of MetricPoint sorts the whole
  // series (its key is run, name, actor, step), which took 3.9 s on a 1M-step run.
  const rows = await db.$queryRaw<{ runId: string; value: number }[]>`
    SELECT r.id AS "runId", last.value
    FROM unnest(${runIds}::text[]) AS r(id)
    CROSS JOIN LATERAL (
      SELECT "lastValue" AS value FROM "MetricRollup" m
      WHERE m."runId" = r.id AND m.name = 'reward/mean' AND m.level = 5
      ORDER BY m."lastStep" DESC, m.actor LIMIT 1
    ) last`;
  return new Map(rows.map((r) => [r.runId, Number(r.value)]));
}

export function toRunSummary(row: RunSummaryRow, lastReward: number | null): RunSummary {
  return {
    id: row.id,
    // The run's own readable name; the spec's name (shared by its re-runs) beside it.
    name: row.displayName,
    specName: row.name,
    status: row.status,
    experimentId: row.experimentId,
    experimentName: row.experiment?.name ?? null,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    lastStep: row.lastStep,
    totalSteps: totalStepsOf(row.spec),
    lastReward,
  };
}

/** Recent runs, newest first, with cursor pagination (the cursor is the last run id of a page). */
export async function listRunSummaries(
  db: Db,
  args: { where: Prisma.RunWhereInput; limit: number; cursor?: string | null },
): Promise<{ items: RunSummary[]; nextCursor: string | null }> {
  const rows = await db.run.findMany({
    where: args.where,
    select: runSummarySelect,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: args.limit + 1,
    ...(args.cursor ? { cursor: { id: args.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, args.limit);
  const rewards = await lastRewards(
    db,
    page.map((r) => r.id),
  );
  return {
    items: page.map((r) => toRunSummary(r, rewards.get(r.id) ?? null)),
    nextCursor: rows.length > args.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}
