import { EpisodeMessage } from "@troupe/contracts";
import { z } from "zod";
import type { Db } from "../../../server/db";
import type { EpisodeOut } from "./schemas";

/**
 * Reading a run's episodes, for the run page (tRPC), the transcript browser and the REST API: one
 * query for "a page of one run's episodes" and one mapping of a stored row to what readers see.
 */

/** An Episode row as Prisma or a raw query returns it (raw queries may give bigints or decimals). */
export interface StoredEpisode {
  seq: number | bigint;
  step: number | bigint;
  environment: string;
  groupIndex: number | bigint;
  sampleIndex: number | bigint;
  datasetRow: number | bigint | null;
  messages: unknown;
  reward: number;
  rewardComponents: unknown;
  advantage: number | null;
  ts: Date;
}

const StoredMessages = z.array(EpisodeMessage);
const StoredComponents = z.record(z.string(), z.number());

export function toEpisode(row: StoredEpisode): EpisodeOut {
  return {
    seq: Number(row.seq),
    step: Number(row.step),
    environment: row.environment,
    group: Number(row.groupIndex),
    sample: Number(row.sampleIndex),
    datasetRow: row.datasetRow === null ? null : Number(row.datasetRow),
    // Stored JSON is re-validated: pages render it as text and clients parse it, and one bad row
    // should break neither.
    messages: StoredMessages.safeParse(row.messages).data ?? [],
    reward: Number(row.reward),
    rewardComponents: StoredComponents.safeParse(row.rewardComponents).data ?? {},
    advantage: row.advantage === null ? null : Number(row.advantage),
    ts: row.ts,
  };
}

export interface EpisodePageQuery {
  /** Only this step's episodes. */
  step?: number;
  /** Only episodes after this seq (the last seq of the previous page). */
  afterSeq?: number;
  limit: number;
  /**
   * `emitted`: in event order (seq), which pages with `afterSeq`; `grouped`: group by group, sample
   * by sample, how a step's page lays them out (the runtime now emits whole groups in this order, but
   * runs recorded before it emitted the first sample of every group first, so the two orders can differ).
   */
  order: "emitted" | "grouped";
}

/** A page of a run's episodes; with `emitted` order, `nextSeq` is the `afterSeq` of the next page (null on the last). */
export async function pageEpisodes(db: Db, runId: string, query: EpisodePageQuery): Promise<{ items: EpisodeOut[]; nextSeq: number | null }> {
  const rows = await db.episode.findMany({
    where: {
      runId,
      ...(query.step !== undefined ? { step: query.step } : {}),
      ...(query.afterSeq !== undefined ? { seq: { gt: query.afterSeq } } : {}),
    },
    orderBy: query.order === "emitted" ? [{ seq: "asc" }] : [{ groupIndex: "asc" }, { sampleIndex: "asc" }, { seq: "asc" }],
    take: query.limit + 1,
  });
  const items = rows.slice(0, query.limit).map(toEpisode);
  return { items, nextSeq: rows.length > query.limit ? items.at(-1)!.seq : null };
}

