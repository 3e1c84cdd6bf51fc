import { describe, expect, it } from "vitest";
import { collectRows, promptBefore, rowsToJsonl, type CollectEpisode } from "../src/features/runs/lib/collectRows";

/** Choosing what `collect` keeps (collectRows.ts): per-actor thresholds, trained completions only, dedupe. */
const single = (step: number, prompt: string, completion: string, reward: number): CollectEpisode => ({
  step,
  environment: "echo",
  datasetRow: 3,
  reward,
  messages: [
    { actor: "letters", role: "user", content: prompt, trained: false },
    { actor: "student", role: "assistant", content: completion, trained: true },
  ],
});

const conversation: CollectEpisode = {
  step: 2,
  environment: "digit",
  datasetRow: null,
  reward: 0.9,
  messages: [
    { actor: "Alice", role: "system", content: "the digit is 3", trained: false },
    { actor: "data", role: "user", content: "go", trained: false },
    { actor: "Alice", role: "assistant", content: "3", trained: true },
    { actor: "Bob", role: "assistant", content: "33", trained: true },
    { actor: "Judge", role: "assistant", content: "ok", trained: false },
  ],
};

describe("collect rows", () => {
  it("keeps trained completions at or above the threshold, once each", () => {
    const episodes = [single(1, "say a:", "aaa", 1), single(1, "say b:", "bx", 0.4), single(2, "say a:", "aaa", 1), single(3, "say c:", "cc", 0.5)];
    const { rows, perActor, best } = collectRows(episodes, { runId: "r", minReward: 0.5, dedupe: true });
    expect(rows.map((r) => [r.prompt, r.completion, r.step])).toEqual([
      ["say a:", "aaa", 1],
      ["say c:", "cc", 3],
    ]);
    expect(rows[0]).toEqual({ prompt: "say a:", completion: "aaa", actor: "student", reward: 1, step: 1, environment: "echo", datasetRow: 3, run: "r" });
    expect(perActor.get("student")).toEqual({ threshold: 0.5, scanned: 4, kept: 2 });
    expect(best).toBe(1);
    expect(collectRows(episodes, { runId: "r", minReward: 0.5, dedupe: false }).rows).toHaveLength(3);
    expect(collectRows(episodes, { runId: "r", minReward: 0.5, dedupe: true, fromStep: 2 }).rows.map((r) => r.step)).toEqual([2, 3]);
  });

  it("applies each actor's own threshold in a conversation and leaves out untrained speakers", () => {
    const { rows, perActor } = collectRows([conversation], { runId: "r", minReward: 0.5, minRewardByActor: { Bob: 0.95 }, dedupe: true });
    expect(rows.map((r) => [r.actor, r.prompt, r.completion])).toEqual([["Alice", "go", "3"]]);
    expect(perActor.get("Bob")).toEqual({ threshold: 0.95, scanned: 1, kept: 0 });
    expect(perActor.has("Judge")).toBe(false);
    expect(promptBefore(conversation.messages, 3)).toBe("data: go\nAlice: 3");
    expect(collectRows([conversation], { runId: "r", minReward: 0, actors: ["Bob"], dedupe: true }).rows.map((r) => r.actor)).toEqual(["Bob"]);
  });

  it("writes one JSON object per line", () => {
    const text = rowsToJsonl(collectRows([single(1, "p", "c", 1)], { runId: "r", minReward: 0, dedupe: true }).rows);
    expect(text.trim().split("\n").map((l) => JSON.parse(l).completion)).toEqual(["c"]);
  });
});
