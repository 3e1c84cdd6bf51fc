import type { EventStoreDb } from "@troupe/db";
import { Batcher } from "../io/batcher";
import { LogTail } from "../io/logTail";

/** Where a log line came from: the child's stdout/stderr, or the runner's own notes about the run. */
export type LogStream = "stdout" | "stderr" | "runner";

/** Longest log line kept; longer ones are cut (a progress bar without newlines, a dumped tensor). */
export const MAX_LOG_LINE_CHARS = 16_384;

/**
 * A run's log: every line becomes a LogLine row (batched, `lineNo` increasing across streams
 * in arrival order) and enters the in-memory tail that ends up in Run.logTail.
 */
export class LogSink {
  readonly tail = new LogTail(50);
  private nextLineNo: number;
  private readonly batcher: Batcher<{ runId: string; lineNo: number; stream: string; text: string; ts: Date }>;

  constructor(
    db: EventStoreDb,
    private readonly runId: string,
    firstLineNo: number,
    onError: (error: unknown) => void,
    giveUpAfterMs?: number,
  ) {
    this.nextLineNo = firstLineNo;
    this.batcher = new Batcher({
      maxItems: 500,
      maxDelayMs: 250,
      ...(giveUpAfterMs !== undefined ? { giveUpAfterMs } : {}),
      flush: async (rows) => {
        await db.logLine.createMany({ data: rows, skipDuplicates: true });
      },
      onError,
    });
  }

  /** The first free line number of a run (a run's log continues if it is ever supervised again). */
  static async firstFreeLineNo(db: EventStoreDb, runId: string): Promise<number> {
    const last = await db.logLine.findFirst({ where: { runId }, orderBy: { lineNo: "desc" }, select: { lineNo: true } });
    return (last?.lineNo ?? 0) + 1;
  }

  write(stream: LogStream, line: string, truncated = false): void {
    // Postgres text cannot hold NUL; keep the rest of the line.
    let text = line.replaceAll("\u0000", "\uFFFD");
    if (text.length > MAX_LOG_LINE_CHARS) text = text.slice(0, MAX_LOG_LINE_CHARS);
    if (truncated || line.length > MAX_LOG_LINE_CHARS) text += " … [line cut]";
    this.tail.push(stream === "stderr" || stream === "stdout" ? text : `[${stream}] ${text}`);
    this.batcher.push({ runId: this.runId, lineNo: this.nextLineNo++, stream, text, ts: new Date() });
  }

  drain(): Promise<void> {
    return this.batcher.drain();
  }
}
