import { CheckpointEvent, CheckpointPrunedEvent } from "@troupe/contracts";

/** One stored event of a run, as read from RunEvent. */
export interface StoredEventRow {
  seq: number;
  type: string;
  ts: Date;
  payload: unknown;
}

export interface ListedCheckpoint {
  step: number;
  actor: string | null;
  path: string;
  sizeBytes: number | null;
  ts: Date;
  /** Set when the runtime deleted the folder to keep only the newest `trainer.keepCheckpoints`. */
  pruned: { keepCheckpoints: number; ts: Date } | null;
}

/**
 * The run's checkpoints (one per actor and step, oldest first) from its `checkpoint` events, each
 * marked `pruned` when a later `checkpoint_pruned` event of the same step says its folder is gone.
 * "Later" matters: a step saved again after its folder was deleted (a resumed attempt) exists again.
 */
export function checkpointsFromEvents(rows: readonly StoredEventRow[]): ListedCheckpoint[] {
  const ordered = [...rows].sort((a, b) => a.seq - b.seq);
  const listed: (ListedCheckpoint & { seq: number })[] = [];
  for (const row of ordered) {
    if (row.type === "checkpoint") {
      const parsed = CheckpointEvent.safeParse(row.payload);
      if (!parsed.success) continue;
      const e = parsed.data;
      listed.push({ seq: row.seq, step: e.step, actor: e.actor ?? null, path: e.path, sizeBytes: e.sizeBytes ?? null, ts: row.ts, pruned: null });
    } else if (row.type === "checkpoint_pruned") {
      const parsed = CheckpointPrunedEvent.safeParse(row.payload);
      if (!parsed.success) continue;
      for (const c of listed) {
        if (c.step === parsed.data.step && c.pruned === null) c.pruned = { keepCheckpoints: parsed.data.keepCheckpoints, ts: row.ts };
      }
    }
  }
  return listed.map(({ seq: _seq, ...checkpoint }) => checkpoint);
}
