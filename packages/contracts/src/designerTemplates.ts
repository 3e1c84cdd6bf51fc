import { DEBATE_TEMPLATE_INPUT } from "./templates";
import { SPEC_VERSION, type RunSpecInput } from "./runSpec";

/**
 * Experiments a person can start from in the designer (Experiments page, "Start from a template"): a debate, a
 * majority vote, a summary, a CORY pair and a self-play board game. Tiny character models on the CPU, so each runs on a laptop
 * as it is; swap the actors' models and the dataset for real ones. The majority-vote and summary templates use
 * the environment kinds of the same names (gpu-runtime envs/majority_vote.py, envs/summary.py); the debate is the
 * outcome template of templates.ts.
 */
const tinyActor = (name: string, maxNewTokens = 6) => ({
  name,
  model: { source: "tiny" as const, preset: "tiny-char-2l" as const },
  backend: "hf" as const,
  trainable: true,
  training: { learningRate: 3e-3, maxGradNorm: 1.0 },
  sampling: { temperature: 1.0, maxNewTokens },
});

const words = { name: "words", source: { kind: "builtin" as const, name: "reverse_word" as const, size: 256 } };
const cpuTrainer = { steps: 100, promptsPerStep: 4, episodesPerStep: 4, device: "cpu" as const, cpuThreads: 1 };

/** Three solvers answer alone; the majority answer is the team's. */
export const MAJORITY_VOTE_KIND_TEMPLATE_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "Majority vote (template)",
  description:
    "Environment kind `majority_vote`: s1, s2 and s3 answer the same prompt, none seeing another's answer; the answer with the most votes is the team's (a tie decides nothing). Each solver's reward: outcome × [the vote is right] + own × [its own answer is right].",
  seed: 1234,
  actors: [tinyActor("s1"), tinyActor("s2"), tinyActor("s3")],
  datasets: [words],
  rewards: [],
  environments: [
    {
      name: "vote",
      kind: "majority_vote",
      dataset: "words",
      actors: ["s1", "s2", "s3"],
      prompt: { field: "prompt", applyChatTemplate: false },
      majorityVote: { answerField: "answer", extract: "text", rewardWeights: { outcome: 1, own: 0.5 } },
    },
  ],
  algorithm: { name: "grpo", groupSize: 8 },
  trainer: cpuTrainer,
  tags: ["template", "multi-agent", "majority-vote"],
};

/** Three solvers answer alone; a summariser reads their answers and writes the team's. */
export const SUMMARY_TEMPLATE_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "Summary (template)",
  description:
    "Environment kind `summary`: s1, s2 and s3 answer the same prompt, none seeing another's answer; then `lead` reads all three and writes the team's answer. Every actor's reward: outcome × [the summary is right] + own × [its own answer is right].",
  seed: 1234,
  actors: [tinyActor("s1"), tinyActor("s2"), tinyActor("s3"), tinyActor("lead")],
  datasets: [words],
  rewards: [],
  environments: [
    {
      name: "summary",
      kind: "summary",
      dataset: "words",
      actors: ["s1", "s2", "s3", "lead"],
      prompt: { field: "prompt", applyChatTemplate: false },
      systemPrompts: { lead: "Read the answers and give the right one." },
      summary: { summariser: "lead", answerField: "answer", extract: "text", rewardWeights: { outcome: 1, own: 0.5 } },
    },
  ],
  algorithm: { name: "grpo", groupSize: 8 },
  trainer: cpuTrainer,
  tags: ["template", "multi-agent", "summary"],
};

/** CORY: two copies of one tiny model, a pioneer and an observer who reads its answer, exchanging roles. */
export const CORY_TEMPLATE_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "CORY pioneer and observer (template)",
  description:
    "Learner `cory`: `alice` and `bob`, two copies of one tiny model, play the roles `pioneer` (answers the prompt) and `observer` (answers after reading the pioneer's answer): `pioneer -> observer`. Each role's own reward is exact match with the row's `answer`; both learn from their sum, and every `swapEvery` steps they exchange roles. Charts: `role/pioneer/reward` and `role/observer/reward`.",
  seed: 1234,
  actors: [tinyActor("alice"), tinyActor("bob")],
  datasets: [words],
  rewards: [{ name: "right", source: { kind: "builtin", name: "exact_match", params: { field: "answer" } } }],
  environments: [
    {
      name: "pair",
      kind: "collaborative",
      dataset: "words",
      actors: ["alice", "bob"],
      roles: { pioneer: "alice", observer: "bob" },
      roundSpec: "pioneer -> observer",
      maxTurns: 2,
      prompt: { field: "prompt", applyChatTemplate: false },
      rewards: [{ reward: "right", weight: 1 }],
    },
  ],
  algorithm: { name: "cory", groupSize: 8, cory: { swapEvery: 10 } },
  trainer: cpuTrainer,
  tags: ["template", "multi-agent", "cory"],
};

/** Two actors of the same tiny model play tic-tac-toe against each other. */
export const SELF_PLAY_GAME_TEMPLATE_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "Self-play tic-tac-toe (template)",
  description:
    "Environment kind `game`, opponent `actors`, with roles: one tiny model, `policy`, plays both `X` (moves first) and `O` (`environments[].roles`), so self-play is one set of weights and one update over both roles' moves; the game speaks between moves. Win 1, draw 0, loss -1, an illegal move forfeits; 0.1 per legal move while it learns what a move looks like. `algorithm.advantage: \"rae\"` keeps a moving baseline per role (zero-sum play).",
  seed: 1234,
  actors: [tinyActor("policy", 4)],
  datasets: [{ name: "boards", source: { kind: "builtin", name: "echo_letter", size: 64 } }],
  rewards: [],
  environments: [
    {
      name: "tictactoe",
      kind: "game",
      dataset: "boards",
      actors: ["policy"],
      roles: { X: "policy", O: "policy" },
      game: { name: "tic_tac_toe", opponent: "actors", legalMoveReward: 0.1 },
      prompt: { field: "prompt", applyChatTemplate: false },
      maxTurns: 9,
    },
  ],
  algorithm: { name: "grpo", groupSize: 8, advantage: "rae" },
  trainer: cpuTrainer,
  tags: ["template", "multi-agent", "self-play"],
};

/** The solver reverses the proposer's word: right when its answer is the proposal read backwards. */
const REVERSES_PROPOSAL = [
  "def reward(conversation, actor_name, **row):",
  "    said = {m['actor']: m['content'].strip() for m in conversation if m['actor'] in ('proposer', 'solver')}",
  "    return float(len(said) == 2 and said['proposer'] != '' and said['solver'] == said['proposer'][::-1])",
].join("\n");

/** Proposer–solver: one tiny model writes a word, another reverses it; the proposer is paid for learnable words. */
export const PROPOSER_SOLVER_TEMPLATE_INPUT: RunSpecInput = {
  specVersion: SPEC_VERSION,
  name: "Proposer and solver (template)",
  description:
    "`algorithm.advantage: \"hierarchical\"`: `alice` plays `proposer` and writes a word, `bob` plays `solver` and answers it reversed (`proposer -> solver`). Each row's 8 episodes are 2 proposals answered 4 times each (`solverSamples`); the solver learns against the other answers to the same word, the proposer is paid p(1-p), p its word's solve rate (`proposerReward: \"learnability\"`: words solved sometimes, not always or never), against the row's other proposal. Charts: `role/proposer/reward` and `role/solver/reward`.",
  seed: 1234,
  actors: [tinyActor("alice", 4), tinyActor("bob", 4)],
  datasets: [words],
  rewards: [{ name: "reversed", scope: "conversation", source: { kind: "python", code: REVERSES_PROPOSAL } }],
  environments: [
    {
      name: "tasks",
      kind: "collaborative",
      dataset: "words",
      actors: ["alice", "bob"],
      roles: { proposer: "alice", solver: "bob" },
      roundSpec: "proposer -> solver",
      maxTurns: 2,
      prompt: { field: "prompt", applyChatTemplate: false },
      rewards: [{ reward: "reversed", weight: 1 }],
    },
  ],
  algorithm: { name: "grpo", groupSize: 8, advantage: "hierarchical", hierarchical: { proposer: "proposer", solver: "solver", solverSamples: 4, proposerReward: "learnability" } },
  trainer: cpuTrainer,
  tags: ["template", "multi-agent", "proposer-solver"],
};

/** The designer's templates, in the order it lists them; `note` is the one line it shows beside each. */
export const DESIGNER_TEMPLATES: { id: string; label: string; note: string; spec: RunSpecInput }[] = [
  { id: "debate", label: "Debate", note: "Two debaters argue in turn; a frozen judge names the winner, who is rewarded.", spec: DEBATE_TEMPLATE_INPUT },
  { id: "majority_vote", label: "Majority vote", note: "Three solvers answer alone; the majority answer decides everyone's reward.", spec: MAJORITY_VOTE_KIND_TEMPLATE_INPUT },
  { id: "summary", label: "Summary", note: "Three solvers answer alone; a summariser reads them and writes the team's answer.", spec: SUMMARY_TEMPLATE_INPUT },
  { id: "cory", label: "CORY pair", note: "A pioneer and an observer of one model, the observer reading the pioneer's answer; they swap roles.", spec: CORY_TEMPLATE_INPUT },
  { id: "proposer_solver", label: "Proposer–solver", note: "One model writes a task, another answers it several times; the writer is paid for tasks solved sometimes, not always or never.", spec: PROPOSER_SOLVER_TEMPLATE_INPUT },
  { id: "self_play_game", label: "Self-play game", note: "One tiny model plays both X and O (roles): self-play with one set of weights and a moving baseline per role.", spec: SELF_PLAY_GAME_TEMPLATE_INPUT },
];
