import type { RunEvent } from "@troupe/contracts";
import type { EventStoreDb } from "./dbClient";
import { parseEvents } from "./parse";

/** Events of a run with seq > afterSeq, in seq order, at most `limit` of them (the SSE backfill). */
export async function listEventsAfter(
  db: EventStoreDb,
  runId: string,
  afterSeq: number,
  limit: number,
): Promise<RunEvent[]> {
  const rows = await db.runEvent.findMany({
    where: { runId, seq: { gt: afterSeq } },
    orderBy: { seq: "asc" },
    take: limit,
    select: { payload: true },
  });
  return parseEvents(
    rows.map((r) => r.payload),
    `listEventsAfter(run ${runId})`,
  );
}
