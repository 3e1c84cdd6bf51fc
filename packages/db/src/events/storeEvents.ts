import type { RunEvent } from "@troupe/contracts";
import type { EventStoreDb } from "./dbClient";
import { deriveRows } from "./derivedRows";
import { parseEvents } from "./parse";

/**
 * Stores a batch of events and the rows derived from them in one transaction.
 *
 * Idempotent: every insert skips rows that already exist (events are unique on run + seq,
 * metric points on run + name + actor + step, memory samples and episodes on run + seq), and
 * `lastSeq` / `lastStep` only ever rise (GREATEST), so replaying a batch after a crash or a
 * retry stores nothing twice and never moves the run backwards.
 *
 * Returns how many events were new.
 */
export async function storeEvents(
  db: EventStoreDb,
  runId: string,
  events: readonly RunEvent[],
): Promise<{ inserted: number }> {
  if (events.length === 0) return { inserted: 0 };
  const rows = deriveRows(runId, parseEvents(events, `storeEvents(run ${runId})`));

  const [inserted] = await db.$transaction([
    db.runEvent.createMany({ data: rows.events, skipDuplicates: true }),
    db.metricPoint.createMany({ data: rows.metrics, skipDuplicates: true }),
    db.memorySample.createMany({ data: rows.memory, skipDuplicates: true }),
    db.episode.createMany({ data: rows.episodes, skipDuplicates: true }),
    // GREATEST ignores NULLs in Postgres: a batch without steps leaves lastStep alone, and a
    // run without any step yet takes the batch's.
    db.$executeRaw`UPDATE "Run"
       SET "lastSeq" = GREATEST("lastSeq", ${rows.maxSeq}::int),
           "lastStep" = GREATEST("lastStep", ${rows.maxStep}::int)
     WHERE "id" = ${runId}`,
  ]);
  return { inserted: inserted.count };
}
