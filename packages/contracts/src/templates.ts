import { RunSpec, SPEC_VERSION, type RunSpecInput } from "./runSpec";

/**
 * Templates where several actors answer and an outcome decides each one's reward (MAVERL's runners):
 * a majority vote, or a debate a judge settles. Tiny character models so they run on a laptop CPU;
 * swap the actors' models for real ones and the dataset for yours (a column with the right answer).
 * The rewards are the runtime's builtins `majority_vote` and `debate_verdict` (gpu-runtime/src/troupe/outcomes.py).
 */
const tinyActor = (name: string, trainable: boolean, maxNewTokens = 6) => ({
  name,
  model: { source: "tiny" as const, preset: "tiny-char-2l" as const },
  backend: "hf" as const,
  trainable,
  ...(trainable ? { training: { learningRate: 3e-3, maxGradNorm: 1.0 } } : {}),
  sampling: { temperature: 1.0, maxNewTokens },
});

/** Three solvers answer at once; the majority answer decides: all three are rewarded when it is right. */
export const MAJORITY_VOTE_TEMPLATE_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "Majority vote (template)",
  description:
    "Three solvers answer the same prompt at the same time `(s1 & s2 & s3)`; the majority answer is the team's. Reward `majority_vote` in mode `team`: every solver gets 1 when the majority answer equals the row's `answer` (a tie decides nothing). Mode `agree` needs no labels: 1 for voting with the majority.",
  seed: 1234,
  actors: [tinyActor("s1", true), tinyActor("s2", true), tinyActor("s3", true)],
  datasets: [{ name: "words", source: { kind: "builtin", name: "reverse_word", size: 256 } }],
  rewards: [
    {
      name: "vote",
      scope: "conversation",
      source: { kind: "builtin", name: "majority_vote", params: { field: "answer", extract: "text", mode: "team" } },
    },
  ],
  environments: [
    {
      name: "vote",
      kind: "collaborative",
      dataset: "words",
      actors: ["s1", "s2", "s3"],
      roundSpec: "(s1 & s2 & s3)",
      // Each solver answers alone: nobody reads another's answer before the vote.
      visibility: { s1: [], s2: [], s3: [] },
      prompt: { field: "prompt", applyChatTemplate: false },
      rewards: [{ reward: "vote", weight: 1 }],
    },
  ],
  algorithm: { name: "grpo", groupSize: 8 },
  trainer: { steps: 100, promptsPerStep: 4, episodesPerStep: 4, device: "cpu", cpuThreads: 1 },
  tags: ["template", "multi-agent", "majority-vote"],
};

/** Two debaters argue in turn; a frozen judge names the winner, who gets the reward. */
export const DEBATE_TEMPLATE_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "Debate (template)",
  description:
    "`pro` and `con` answer and rebut in turn, then the frozen `judge` names the winner: `(pro -> con)*2 -> judge`. Reward `debate_verdict`: the debater the judge names first gets 1, the other 0; the judge (if trained) gets 1 when the winner's answer equals the row's `answer`.",
  seed: 1234,
  actors: [tinyActor("pro", true), tinyActor("con", true), tinyActor("judge", false, 4)],
  datasets: [{ name: "words", source: { kind: "builtin", name: "reverse_word", size: 256 } }],
  rewards: [
    {
      name: "verdict",
      scope: "conversation",
      source: { kind: "builtin", name: "debate_verdict", params: { judge: "judge", field: "answer", extract: "text" } },
    },
  ],
  environments: [
    {
      name: "debate",
      kind: "collaborative",
      dataset: "words",
      actors: ["pro", "con", "judge"],
      roundSpec: "(pro -> con)*2 -> judge",
      systemPrompts: { judge: "Name the winner: pro or con." },
      prompt: { field: "prompt", applyChatTemplate: false },
      rewards: [{ reward: "verdict", weight: 1 }],
      maxTurns: 5,
    },
  ],
  algorithm: { name: "grpo", groupSize: 8 },
  trainer: { steps: 100, promptsPerStep: 4, episodesPerStep: 4, device: "cpu", cpuThreads: 1 },
  tags: ["template", "multi-agent", "debate"],
};

export const MAJORITY_VOTE_TEMPLATE: RunSpec = RunSpec.parse(MAJORITY_VOTE_TEMPLATE_INPUT);
export const DEBATE_TEMPLATE: RunSpec = RunSpec.parse(DEBATE_TEMPLATE_INPUT);
/** Every outcome template, in the order the designer lists them. */
export const OUTCOME_TEMPLATES: RunSpecInput[] = [MAJORITY_VOTE_TEMPLATE_INPUT, DEBATE_TEMPLATE_INPUT];
