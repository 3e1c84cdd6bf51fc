"use client";

import { useSyncExternalStore } from "react";

const subscribe = () => () => undefined;

/**
 * False on the server and during hydration, true after: text that depends on the browser (its locale and
 * time zone, the current time) is rendered only once this is true. Rendering it earlier made the server's
 * text (UTC, the server's clock) differ from the browser's, React error #418 on every run page.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}

/** A time both sides print alike (UTC, minute precision), shown until the browser's own format can be. */
export function stableDateTime(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
