"use client";

import { isTerminal, RunEvent } from "@troupe/contracts";
import { useEffect, useRef, useState } from "react";

export interface UseRunEventsOptions {
  /** Seq to resume after (events with a higher seq arrive). Null: wait (e.g. until the run has loaded). */
  after: number | null;
  /** False: close the stream (e.g. once the run is known to have ended). */
  enabled: boolean;
  /** Receives events in seq order, each once, in small batches (so a burst re-renders once). */
  onEvents: (events: RunEvent[]) => void;
  /** Called when the server refused or closed the stream for good (404, 204, 5xx). */
  onClosed?: () => void;
}

const REOPEN_DELAY_MS = 3000;
// Timers rather than animation frames: frames pause in background tabs, and events should not pile up.
// One frame: a backfill burst arrives within a few ms and still renders once, while a live point
// waits at most 16 ms here (it was 100 ms, the largest part of the store → chart latency).
const BATCH_MS = 16;

/**
 * Follows a run's live events over SSE (`/api/runs/:id/events`). The browser resumes by itself
 * with `Last-Event-ID` after a dropped connection; when it gives up (the stream was closed for good),
 * the hook reopens it after a pause from the last seq it saw, until `enabled` turns false or a
 * terminal status arrives. Events at or below the last seq seen are dropped, so nothing repeats.
 */
export function useRunEvents(runId: string, options: UseRunEventsOptions): { connected: boolean; lastSeq: number | null } {
  const { after, enabled } = options;
  const [connected, setConnected] = useState(false);
  const [lastSeqState, setLastSeqState] = useState<number | null>(null);
  const callbacks = useRef(options);
  callbacks.current = options;
  const lastSeq = useRef<number | null>(null);

  useEffect(() => {
    if (!enabled || after === null) return;
    if (lastSeq.current === null || lastSeq.current < after) lastSeq.current = after;

    let source: EventSource | null = null;
    let reopenTimer: ReturnType<typeof setTimeout> | undefined;
    let batchTimer: ReturnType<typeof setTimeout> | undefined;
    let buffer: RunEvent[] = [];
    let ended = false;

    const flush = () => {
      batchTimer = undefined;
      const batch = buffer;
      buffer = [];
      if (batch.length > 0) {
        setLastSeqState(batch[batch.length - 1]!.seq);
        callbacks.current.onEvents(batch);
      }
    };

    const open = () => {
      source = new EventSource(`/api/runs/${encodeURIComponent(runId)}/events?after=${lastSeq.current ?? 0}`);
      source.onopen = () => setConnected(true);
      source.onmessage = (message: MessageEvent<string>) => {
        const parsed = RunEvent.safeParse(JSON.parse(message.data));
        if (!parsed.success) return;
        const event = parsed.data;
        if (lastSeq.current !== null && event.seq <= lastSeq.current) return;
        lastSeq.current = event.seq;
        buffer.push(event);
        batchTimer ??= setTimeout(flush, BATCH_MS);
        if (event.type === "status" && isTerminal(event.state)) {
          ended = true;
          source?.close();
          setConnected(false);
        }
      };
      source.onerror = () => {
        setConnected(false);
        if (source?.readyState !== EventSource.CLOSED || ended) return; // the browser is reconnecting itself
        callbacks.current.onClosed?.();
        reopenTimer = setTimeout(open, REOPEN_DELAY_MS);
      };
    };
    open();

    return () => {
      clearTimeout(reopenTimer);
      clearTimeout(batchTimer);
      flush();
      source?.close();
      setConnected(false);
    };
  }, [runId, after, enabled]);

  return { connected, lastSeq: lastSeqState };
}
