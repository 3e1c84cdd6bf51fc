"use client";

import { useEffect, useRef } from "react";
import { nextRefresh, type RefreshState } from "../lib/transcriptRefresh";

/** Calls `refresh` when new episodes stream in (at most once a second) and once when the run ends. */
export function useTranscriptRefresh(live: boolean, episodesSeen: number, refresh: () => void): void {
  const state = useRef<RefreshState>({ live, seenAtRead: episodesSeen, readAt: Date.now() });
  const latest = useRef(refresh);
  latest.current = refresh;
  useEffect(() => {
    const decide = () => {
      const when = nextRefresh(state.current, live, episodesSeen, Date.now());
      if (when === "now") {
        state.current = { live, seenAtRead: episodesSeen, readAt: Date.now() };
        latest.current();
        return undefined;
      }
      if (when === null) {
        state.current = { ...state.current, live };
        return undefined;
      }
      return setTimeout(decide, when);
    };
    const timer = decide();
    return () => {
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [live, episodesSeen]);
}
