/**
 * The algorithm names: the one list. RunSpec's `algorithm.name` and `training.lossType` enums, the rules, the
 * web's pickers and the runtime (through the generated algorithms.v1.json, read by
 * gpu-runtime/src/troupe/algorithms/names.py) all take them from here, so adding a learner touches one list.
 */

/**
 * Policy-gradient learners on sampled groups (advantages from the group's rewards; no critic). cory is one of them:
 * GRPO's loss on a pioneer and an observer of one base, each trained on their summed reward, their actors exchanging
 * roles every `algorithm.cory.swapEvery` steps.
 */
export const GRPO_FAMILY = ["grpo", "gspo", "dr_grpo", "dapo", "cory"] as const;
/** Learners with critics (one per actor; mappo's and happo's are centralised; vdn's and qmix's are mixed). */
export const PPO_FAMILY = ["ppo", "ippo", "mappo", "vdn", "qmix", "happo"] as const;
/**
 * Team learners (the MAVERL seed's): they need two or more trainable actors in one collaborative environment.
 * vdn: per-agent critics, team value = their sum; qmix: a monotonic mix of them from a hypernetwork over the
 * global state; happo: agents updated one at a time in a seeded random order, each advantage scaled by the
 * earlier agents' new/old probability ratios.
 */
export const TEAM_ALGORITHMS = ["vdn", "qmix", "happo"] as const;
/**
 * Learners whose two actors exchange roles (`environments[].roles` pioneer and observer) during training: cory.
 * They need exactly two trainable actors of one base playing those roles, and synchronous rollouts.
 */
export const ROLE_EXCHANGE_ALGORITHMS = ["cory"] as const;
/** cory's two roles: the pioneer answers the prompt, the observer answers after reading the pioneer's answer. */
export const CORY_ROLES = ["pioneer", "observer"] as const;
/**
 * `algorithm.advantage` for the GRPO family: group-normalised (the default), RAE's per-role moving baseline, or
 * hierarchical (a proposer writes a task, the solver answers it several times; `algorithm.hierarchical`).
 */
export const ADVANTAGE_ESTIMATORS = ["group", "rae", "hierarchical"] as const;
export type AdvantageEstimator = (typeof ADVANTAGE_ESTIMATORS)[number];
/** One line per estimator saying what it does (the designer shows the chosen one's under its picker). */
export const ADVANTAGE_SUMMARIES: Record<AdvantageEstimator, string> = {
  group: "Each reward against its group's mean (GRPO).",
  rae: "Each reward against a moving average of what that role earned before (zero-sum self-play).",
  hierarchical:
    "Proposer–solver: the solver answers each proposal several times and learns against those answers; the proposer is paid for tasks the solver solves sometimes, not always or never.",
};
/**
 * hierarchical: how the proposer's reward comes from p, the mean of its solvers' rewards (clamped into [0, 1]);
 * "own": the environment's rewards for the proposer's role, as they are (a judge of the task, say).
 */
export const PROPOSER_REWARDS = ["learnability", "frontier", "difficulty", "own"] as const;
/** The proposer and solver role names `algorithm.hierarchical` takes by default. */
export const HIERARCHICAL_ROLES = ["proposer", "solver"] as const;
/** Learners on dataset rows instead of sampled episodes. */
export const OFFLINE_FAMILY = ["sft", "dpo"] as const;
/** Every `algorithm.name`, in the order the RunSpec's enum lists them. */
export const ALGORITHM_NAMES = [...GRPO_FAMILY, ...PPO_FAMILY, ...OFFLINE_FAMILY] as const;
export type AlgorithmName = (typeof ALGORITHM_NAMES)[number];
/** `training.lossType`: how the clipped policy loss is normalised (the GRPO family's names). */
export const LOSS_TYPES = ["grpo", "dr_grpo", "dapo", "gspo"] as const;
/** Algorithms that may sample asynchronously (`algorithm.async`): the GRPO family. */
export const ASYNC_ALGORITHMS = GRPO_FAMILY;

/** One line per learner saying what it does (the designer shows the chosen one's under its picker). */
export const ALGORITHM_SUMMARIES: Record<AlgorithmName, string> = {
  grpo: "Group-relative policy gradient: each completion's reward against its group's; no critic.",
  gspo: "GRPO with one importance ratio per sequence instead of per token.",
  dr_grpo: "GRPO without the length and std normalisations (Dr. GRPO's unbiased loss).",
  dapo: "GRPO with asymmetric clipping and a token-mean loss (DAPO); dynamic sampling optional.",
  cory: "CORY: two copies of one base, a pioneer and an observer who reads its answer, trained on their summed reward; they swap roles every swapEvery steps.",
  ppo: "PPO: a critic per actor (a copy of its base) and GAE over its tokens.",
  ippo: "Independent PPO: every actor learns alone with its own critic, in a shared environment.",
  mappo: "MAPPO: one centralised critic per conversation that sees every actor's prompt and turns.",
  vdn: "VDN: a critic per agent; the team value is their sum, fitted to the team return; each turn's advantage from it.",
  qmix: "QMIX: a critic per agent, mixed monotonically by a hypernetwork over the global state into the team value.",
  happo: "HAPPO: MAPPO's critic; agents updated one at a time in a random order, each advantage scaled by the earlier agents' ratios.",
  sft: "Supervised fine-tuning on a dataset's completions; no sampling.",
  dpo: "Direct preference optimisation on a dataset's chosen/rejected pairs; no sampling.",
};

export function renderAlgorithms(): string {
  return (
    JSON.stringify(
      {
        $comment: "Generated from packages/contracts/src/algorithms.ts (npm run contracts:export); never edit by hand.",
        grpoFamily: GRPO_FAMILY,
        ppoFamily: PPO_FAMILY,
        team: TEAM_ALGORITHMS,
        roleExchange: ROLE_EXCHANGE_ALGORITHMS,
        coryRoles: CORY_ROLES,
        advantages: ADVANTAGE_ESTIMATORS,
        proposerRewards: PROPOSER_REWARDS,
        offline: OFFLINE_FAMILY,
        names: ALGORITHM_NAMES,
        lossTypes: LOSS_TYPES,
        async: ASYNC_ALGORITHMS,
      },
      null,
      2,
    ) + "\n"
  );
}
