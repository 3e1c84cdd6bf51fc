import { Prisma } from "@troupe/db";
import { z } from "zod";
import type { Db } from "../../../server/db";
import { toEpisode, type StoredEpisode } from "./episodes";
import { EpisodeOut } from "./schemas";

/**
 * Transcripts (episodes) of a run, filtered and paged for a virtualised list. Order: newest step
 * first, then in the order the runtime emitted them (group by group). Keyset-paged on (step, seq), so
 * page 1,000 of 100k episodes costs what page 1 does.
 */
export const TranscriptsInput = z
  .object({
    runId: z.string().min(1),
    step: z.number().int().min(0).optional(),
    /** A step range, inclusive (e.g. the window a health advisory looked at). */
    fromStep: z.number().int().min(0).optional(),
    toStep: z.number().int().min(0).optional(),
    group: z.number().int().min(0).optional(),
    datasetRow: z.number().int().min(0).optional(),
    /** Episodes in which this actor speaks. */
    actor: z.string().min(1).max(64).optional(),
    environment: z.string().min(1).max(64).optional(),
    minReward: z.number().optional(),
    maxReward: z.number().optional(),
    /** Case-insensitive text search in the turns. */
    q: z.string().min(1).max(200).optional(),
    /** From `nextCursor` of the previous page. */
    cursor: z.object({ step: z.number().int(), seq: z.number().int() }).nullish(),
    limit: z.number().int().min(1).max(200).default(50),
    /** Sent by tRPC's infinite queries; pages only go forward. */
    direction: z.enum(["forward", "backward"]).optional(),
  })
  .strict();
export type TranscriptsInput = z.infer<typeof TranscriptsInput>;

/** Every recorded sample of a GRPO group (one step, environment and group), whatever the filters matched. */
export const TranscriptGroupOut = z.object({
  step: z.number().int(),
  environment: z.string(),
  group: z.number().int(),
  samples: z.array(z.object({ seq: z.number().int(), sample: z.number().int(), reward: z.number(), advantage: z.number().nullable() })),
});

export const TranscriptsOutput = z.object({
  items: z.array(EpisodeOut),
  /** The groups of this page's items, each with all its samples: the list's group headers. */
  groups: z.array(TranscriptGroupOut),
  nextCursor: z.object({ step: z.number().int(), seq: z.number().int() }).nullable(),
});

/** LIKE pattern for a literal substring. */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listTranscripts(db: Db, input: TranscriptsInput): Promise<z.infer<typeof TranscriptsOutput>> {
  const conditions: Prisma.Sql[] = [Prisma.sql`"runId" = ${input.runId}`];
  if (input.step !== undefined) conditions.push(Prisma.sql`step = ${input.step}`);
  if (input.fromStep !== undefined) conditions.push(Prisma.sql`step >= ${input.fromStep}`);
  if (input.toStep !== undefined) conditions.push(Prisma.sql`step <= ${input.toStep}`);
  if (input.group !== undefined) conditions.push(Prisma.sql`"groupIndex" = ${input.group}`);
  if (input.datasetRow !== undefined) conditions.push(Prisma.sql`"datasetRow" = ${input.datasetRow}`);
  if (input.environment !== undefined) conditions.push(Prisma.sql`environment = ${input.environment}`);
  if (input.minReward !== undefined) conditions.push(Prisma.sql`reward >= ${input.minReward}`);
  if (input.maxReward !== undefined) conditions.push(Prisma.sql`reward <= ${input.maxReward}`);
  if (input.actor !== undefined) conditions.push(Prisma.sql`messages @> ${JSON.stringify([{ actor: input.actor }])}::jsonb`);
  if (input.q !== undefined) {
    // Search the turns' text, not the JSON around it.
    conditions.push(Prisma.sql`EXISTS (SELECT 1 FROM jsonb_array_elements(messages) m WHERE m->>'content' ILIKE ${likePattern(input.q)})`);
  }
  if (input.cursor) {
    const { step, seq } = input.cursor;
    conditions.push(Prisma.sql`(step < ${step} OR (step = ${step} AND seq > ${seq}))`);
  }
  const rows = await db.$queryRaw<StoredEpisode[]>`
    SELECT seq, step, environment, "groupIndex", "sampleIndex", "datasetRow", messages, reward, "rewardComponents", advantage, ts
    FROM "Episode" WHERE ${Prisma.join(conditions, " AND ")}
    ORDER BY step DESC, seq ASC
    LIMIT ${input.limit + 1}`;
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  const items = page.map(toEpisode);
  return {
    items,
    groups: await groupsOf(db, input.runId, items),
    nextCursor: rows.length > input.limit && last ? { step: Number(last.step), seq: Number(last.seq) } : null,
  };
}

/** Every sample of the groups the episodes belong to: one query on the (runId, step, groupIndex) index. */
async function groupsOf(db: Db, runId: string, items: readonly z.infer<typeof EpisodeOut>[]): Promise<z.infer<typeof TranscriptGroupOut>[]> {
  const ids = new Map(items.map((e) => [JSON.stringify([e.step, e.environment, e.group]), e]));
  if (ids.size === 0) return [];
  const tuples = [...ids.values()].map((e) => Prisma.sql`(${e.step}::int, ${e.environment}::text, ${e.group}::int)`);
  const rows = await db.$queryRaw<{ step: number; environment: string; groupIndex: number; sampleIndex: number; seq: number; reward: number; advantage: number | null }[]>`
    SELECT step, environment, "groupIndex", "sampleIndex", seq, reward, advantage
    FROM "Episode" WHERE "runId" = ${runId} AND (step, environment, "groupIndex") IN (${Prisma.join(tuples)})
    ORDER BY step DESC, environment, "groupIndex", "sampleIndex", seq`;
  const groups = new Map<string, z.infer<typeof TranscriptGroupOut>>();
  for (const r of rows) {
    const key = JSON.stringify([Number(r.step), r.environment, Number(r.groupIndex)]);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { step: Number(r.step), environment: r.environment, group: Number(r.groupIndex), samples: [] }));
    group.samples.push({ seq: Number(r.seq), sample: Number(r.sampleIndex), reward: Number(r.reward), advantage: r.advantage === null ? null : Number(r.advantage) });
  }
  return [...groups.values()];
}

/** Steps that have episodes, newest first: a skip scan of the (runId, step, groupIndex) index. */
export async function episodeSteps(db: Db, runId: string, limit: number): Promise<number[]> {
  const rows = await db.$queryRaw<{ step: number }[]>`
    WITH RECURSIVE s AS (
      (SELECT step FROM "Episode" WHERE "runId" = ${runId} ORDER BY step DESC LIMIT 1)
      UNION ALL
      SELECT (SELECT step FROM "Episode" WHERE "runId" = ${runId} AND step < s.step ORDER BY step DESC LIMIT 1)
      FROM s WHERE s.step IS NOT NULL
    )
    SELECT step FROM s WHERE step IS NOT NULL LIMIT ${limit}`;
  return rows.map((r) => Number(r.step));
}

/**
 * Actors that speak in a run's transcripts, read from its first 20,000 episodes (an environment can
 * bring actors the spec does not train, e.g. a judge). The prompt's `actor` is its dataset, not a speaker: left out. Bounded, so a 100k-episode run answers quickly.
 */
export async function episodeActors(db: Db, runId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ actor: string }[]>`
    SELECT DISTINCT m->>'actor' AS actor
    FROM (SELECT messages FROM "Episode" WHERE "runId" = ${runId} ORDER BY seq LIMIT 20000) e, jsonb_array_elements(e.messages) m
    WHERE m->>'actor' IS NOT NULL AND m->>'role' <> 'user' ORDER BY 1`;
  return rows.map((r) => r.actor);
}
