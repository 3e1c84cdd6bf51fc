import type { DatasetSpec, RewardSpec } from "@troupe/contracts";
import type { z } from "zod";

/**
 * The runtime's built-in datasets and rewards, offered next to the library's parts so a first
 * experiment needs nothing uploaded. Sample rows have the fields the runtime generates
 * (gpu-runtime/src/troupe/data.py), for the template preview.
 */
export interface BuiltinDataset {
  spec: z.input<typeof DatasetSpec>;
  columns: string[];
  sampleRows: Record<string, unknown>[];
}

export const BUILTIN_DATASETS: BuiltinDataset[] = [
  {
    spec: { name: "echo_letter", source: { kind: "builtin", name: "echo_letter", size: 256 } },
    columns: ["prompt", "letter"],
    sampleRows: [
      { prompt: "say k:", letter: "k" },
      { prompt: "say q:", letter: "q" },
    ],
  },
  {
    spec: { name: "reverse_word", source: { kind: "builtin", name: "reverse_word", size: 256 } },
    columns: ["prompt", "word", "answer"],
    sampleRows: [
      { prompt: "reverse cat:", word: "cat", answer: "tac" },
      { prompt: "reverse sun:", word: "sun", answer: "nus" },
    ],
  },
];

export const BUILTIN_REWARDS: z.input<typeof RewardSpec>[] = [
  { name: "letter_match", source: { kind: "builtin", name: "letter_match" } },
  { name: "exact_match", source: { kind: "builtin", name: "exact_match" } },
  { name: "length_penalty", source: { kind: "builtin", name: "length_penalty" } },
  // Outcome rewards of several actors (debate, majority vote): conversation scope, one value per actor.
  { name: "majority_vote", scope: "conversation", source: { kind: "builtin", name: "majority_vote", params: { extract: "text", mode: "agree" } } },
  { name: "debate_verdict", scope: "conversation", source: { kind: "builtin", name: "debate_verdict", params: { judge: "judge", extract: "text" } } },
];
