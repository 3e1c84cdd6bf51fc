import { RunSpec, SPEC_VERSION, type RunSpecInput } from "./runSpec";

/**
 * The seeded demo: a tiny character-level model learns, by GRPO on CPU, to answer
 * "say X" with the letter X. It needs nothing downloaded and its reward rises within minutes.
 */
export const DEMO_SPEC_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "Echo the letter (tiny GRPO demo)",
  description:
    "A 2-layer character-level model learns to answer `say k:` with k's by GRPO on CPU. Reward is the fraction of the completion equal to the asked letter.",
  seed: 1234,
  actors: [
    {
      name: "student",
      model: { source: "tiny", preset: "tiny-char-2l" },
      backend: "hf",
      trainable: true,
      training: { learningRate: 3e-3, maxGradNorm: 1.0 },
      sampling: { temperature: 1.0, maxNewTokens: 8 },
    },
  ],
  datasets: [{ name: "letters", source: { kind: "builtin", name: "echo_letter", size: 256 } }],
  rewards: [{ name: "letter_match", source: { kind: "builtin", name: "letter_match" } }],
  environments: [
    {
      name: "echo",
      kind: "single_turn",
      dataset: "letters",
      actors: ["student"],
      prompt: { field: "prompt", applyChatTemplate: false },
      rewards: [{ reward: "letter_match", weight: 1 }],
    },
  ],
  algorithm: { name: "grpo", groupSize: 8 },
  // One thread: the demo model is tiny, and on a small machine it shares the cores with the web app.
  trainer: { steps: 120, promptsPerStep: 8, episodesPerStep: 4, device: "cpu", cpuThreads: 1 },
  tags: ["demo"],
};

export const DEMO_SPEC: RunSpec = RunSpec.parse(DEMO_SPEC_INPUT);

/**
 * The seeded multi-agent demo: what makes Troupe different, without building it in the designer.
 * Two actors talk under a round spec; the student learns (the same letter task), the partner is
 * frozen and answers between the student's turns. Measured on CPU (2 cores): the student's reward
 * rises from ~0.002 to ~0.15-0.3 within 80 steps, about 3 s a step.
 */
export const MULTI_AGENT_DEMO_SPEC_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "Two actors take turns (multi-agent demo)",
  description:
    "A trainable `student` and a frozen `partner` talk under the round spec `student -> partner -> student`. The student learns by GRPO to answer `say k:` with k's; the partner's turn sits between its two turns. Reward: the fraction of the student's answer equal to the asked letter.",
  seed: 1234,
  actors: [
    {
      name: "student",
      model: { source: "tiny", preset: "tiny-char-2l" },
      backend: "hf",
      trainable: true,
      training: { learningRate: 3e-3, maxGradNorm: 1.0 },
      sampling: { temperature: 1.0, maxNewTokens: 8 },
    },
    {
      name: "partner",
      model: { source: "tiny", preset: "tiny-char-2l" },
      backend: "hf",
      trainable: false,
      sampling: { temperature: 1.0, maxNewTokens: 4 },
    },
  ],
  datasets: [{ name: "letters", source: { kind: "builtin", name: "echo_letter", size: 256 } }],
  rewards: [{ name: "letter_match", source: { kind: "builtin", name: "letter_match" } }],
  environments: [
    {
      name: "relay",
      kind: "collaborative",
      dataset: "letters",
      actors: ["student", "partner"],
      roundSpec: "student -> partner -> student",
      prompt: { field: "prompt", applyChatTemplate: false },
      rewards: [{ reward: "letter_match", weight: 1 }],
    },
  ],
  algorithm: { name: "grpo", groupSize: 8 },
  trainer: { steps: 120, promptsPerStep: 8, episodesPerStep: 4, device: "cpu", cpuThreads: 1 },
  tags: ["demo", "multi-agent"],
};

export const MULTI_AGENT_DEMO_SPEC: RunSpec = RunSpec.parse(MULTI_AGENT_DEMO_SPEC_INPUT);
