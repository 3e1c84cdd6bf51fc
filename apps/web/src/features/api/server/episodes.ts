import { EpisodeMessage } from "@troupe/contracts";
import { z } from "zod";
import type { Db } from "../../../server/db";
import type { EpisodesOut } from "./schemas";

const StoredMessages = z.array(EpisodeMessage);
const StoredComponents = z.record(z.string(), z.number());

/** Episodes in event order (seq); the cursor is the last seq of the previous page. */
export async function listApiEpisodes(
  db: Db,
  runId: string,
  query: { step?: number; cursor?: string; limit: number },
): Promise<EpisodesOut> {
  const rows = await db.episode.findMany({
    where: {
      runId,
      ...(query.step !== undefined ? { step: query.step } : {}),
      ...(query.cursor !== undefined ? { seq: { gt: Number(query.cursor) } } : {}),
    },
    orderBy: { seq: "asc" },
    take: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  return {
    items: page.map((e) => ({
      seq: e.seq,
      step: e.step,
      environment: e.environment,
      group: e.groupIndex,
      sample: e.sampleIndex,
      datasetRow: e.datasetRow,
      // Stored JSON is re-validated so one bad row cannot break a client's parser.
      messages: StoredMessages.safeParse(e.messages).data ?? [],
      reward: e.reward,
      rewardComponents: StoredComponents.safeParse(e.rewardComponents).data ?? {},
      advantage: e.advantage,
      ts: e.ts.toISOString(),
    })),
    nextCursor: rows.length > query.limit ? String(page.at(-1)!.seq) : null,
  };
}
