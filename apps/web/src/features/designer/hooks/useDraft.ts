"use client";

import { useCallback, useEffect, useState } from "react";

/**
 * Unsaved edits survive navigation: the working copy lives in sessionStorage under `key` until it is
 * saved or discarded, and closing or reloading the tab with unsaved edits asks first.
 *
 * `saved` is what the server holds (null for a new part). Returns the working copy, a setter, whether
 * it differs from `saved`, whether it was restored from an earlier visit, and `reset` (after a save,
 * or to discard).
 */
export function draftStorageKey(key: string): string {
  return `troupe:draft:${key}`;
}

/**
 * Forgets the draft left under `key` (e.g. "New actor" asks for a blank form: the refused draft of the last
 * new part came back instead). Returns whether there was one.
 */
export function forgetDraft(storage: Pick<Storage, "getItem" | "removeItem">, key: string): boolean {
  const had = storage.getItem(draftStorageKey(key)) !== null;
  storage.removeItem(draftStorageKey(key));
  return had;
}

/**
 * JSON with every object's keys sorted: the server stores specs as Postgres jsonb, which reorders keys, so a draft
 * whose keys were written in another order (a field emptied, then typed again) is the same spec, not an edit.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

export function useDraft<T>(key: string, saved: T) {
  const storageKey = draftStorageKey(key);
  const [state, setState] = useState<{ key: string; value: T; restored: boolean }>(() => ({ key, value: saved, restored: false }));

  // On a new key (another part selected), load its draft if one was left behind.
  useEffect(() => {
    let value = saved;
    let restored = false;
    try {
      const raw = sessionStorage.getItem(storageKey);
      if (raw !== null) {
        value = JSON.parse(raw) as T;
        restored = canonicalJson(value) !== canonicalJson(saved);
      }
    } catch {
      /* a corrupt draft is dropped */
    }
    setState({ key, value, restored });
    // `saved` changes identity on every refetch; the key decides when to reload.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [storageKey]);

  const value = state.key === key ? state.value : saved;
  const dirty = canonicalJson(value) !== canonicalJson(saved);

  const setValue = useCallback(
    (next: T | ((prev: T) => T)) => {
      setState((prev) => {
        const base = prev.key === key ? prev.value : saved;
        const v = typeof next === "function" ? (next as (p: T) => T)(base) : next;
        try {
          sessionStorage.setItem(storageKey, JSON.stringify(v));
        } catch {
          /* storage full or disabled: the edit still applies, only its survival is lost */
        }
        return { key, value: v, restored: prev.key === key ? prev.restored : false };
      });
    },
    [key, saved, storageKey],
  );

  const reset = useCallback(
    (to: T) => {
      sessionStorage.removeItem(storageKey);
      setState({ key, value: to, restored: false });
    },
    [key, storageKey],
  );

  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => {
      e.preventDefault();
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  return { value, setValue, dirty, restored: state.key === key && state.restored && dirty, reset };
}
