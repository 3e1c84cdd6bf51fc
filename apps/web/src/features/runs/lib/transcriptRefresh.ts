/**
 * When the Transcripts tab re-reads its lists. It polled every 5 s while the run was live and stopped the
 * moment the run ended, so it lagged ~8 steps behind the charts and stayed on the last poll (step 52 of
 * 60) after the end. Now: as soon as new episode events arrive on the live stream (at most once a second),
 * and once more when the run ends (the runner stores every event before it streams it, so that read has
 * the last step).
 */
export interface RefreshState {
  live: boolean;
  /** Episode events seen on the live stream when the lists were last read. */
  seenAtRead: number;
  /** ms timestamp of the last read. */
  readAt: number;
}

export const MIN_REFRESH_MS = 1000;

/** "now": read again now; a number: read again in that many ms; null: nothing new. */
export function nextRefresh(state: RefreshState, live: boolean, episodesSeen: number, now: number): "now" | number | null {
  if (state.live && !live) return "now";
  if (episodesSeen <= state.seenAtRead) return null;
  const wait = state.readAt + MIN_REFRESH_MS - now;
  return wait <= 0 ? "now" : wait;
}
