import { describe, expect, it } from "vitest";
import { draftStorageKey, forgetDraft } from "../src/features/designer/hooks/useDraft";

describe('"New actor" starts blank', () => {
  it("forgets the new part's draft left behind (a refused save), and only that one", () => {
    const store = new Map<string, string>([
      [draftStorageKey("actor:new"), JSON.stringify({ spec: { name: "taken" }, description: "" })],
      [draftStorageKey("actor:abc"), JSON.stringify({ spec: { name: "kept" }, description: "" })],
    ]);
    const storage = { getItem: (k: string) => store.get(k) ?? null, removeItem: (k: string) => void store.delete(k) };
    expect(forgetDraft(storage, "actor:new")).toBe(true);
    expect(store.has(draftStorageKey("actor:new"))).toBe(false);
    expect(store.has(draftStorageKey("actor:abc"))).toBe(true);
    expect(forgetDraft(storage, "actor:new")).toBe(false);
  });
});
