import type { RunEvent } from "@troupe/contracts";

/** One event in Server-Sent Events framing; the seq is the SSE id, so a reconnect resumes after it. */
export function sseMessage(event: RunEvent): string {
  // JSON.stringify never emits a raw newline, so `data:` stays one line.
  return `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;
}

export const SSE_HEARTBEAT = ": heartbeat\n\n";
/** How long a browser waits before reconnecting after the connection drops. */
export const SSE_RETRY_MS = 2000;

/** Highest seq there can be (a Postgres int): a cursor above it is refused, not queried. */
export const MAX_SEQ = 2 ** 31 - 1;

/**
 * The cursor a client resumes from: the `Last-Event-ID` header (sent by the browser when it
 * reconnects by itself) wins over `?after=` (used when the page opens the stream). Null when
 * either is present but not an integer from 0 to MAX_SEQ.
 */
export function parseCursor(lastEventId: string | null, after: string | null): number | null {
  const raw = lastEventId ?? after ?? "0";
  if (!/^\d{1,10}$/.test(raw.trim())) return null;
  const value = Number(raw.trim());
  return value <= MAX_SEQ ? value : null;
}
