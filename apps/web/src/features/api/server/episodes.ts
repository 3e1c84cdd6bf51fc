import type { ApiEpisodePage } from "@troupe/contracts";
import type { Db } from "../../../server/db";
import { pageEpisodes } from "../../runs/server/episodes";

/** Episodes in event order (seq), through the run page's own query; the cursor is the last seq of the previous page. */
export async function listApiEpisodes(
  db: Db,
  runId: string,
  query: { step?: number; cursor?: string; limit: number },
): Promise<ApiEpisodePage> {
  const page = await pageEpisodes(db, runId, {
    step: query.step,
    afterSeq: query.cursor !== undefined ? Number(query.cursor) : undefined,
    limit: query.limit,
    order: "emitted",
  });
  return {
    items: page.items.map((e) => ({ ...e, ts: e.ts.toISOString() })),
    nextCursor: page.nextSeq !== null ? String(page.nextSeq) : null,
  };
}
