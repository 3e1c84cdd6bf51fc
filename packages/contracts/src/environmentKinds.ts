/**
 * Environments where N actors answer the same prompt in parallel and an outcome decides (MAVERL's runners):
 * `majority_vote` (the answer with the most votes is the team's), `summary` (a summariser reads the answers and
 * writes the team's). The runtime builds them in gpu-runtime/src/troupe/envs/{majority_vote,summary}.py.
 */
export const OUTCOME_ENVIRONMENT_KINDS = ["majority_vote", "summary"] as const;
export type OutcomeEnvironmentKind = (typeof OUTCOME_ENVIRONMENT_KINDS)[number];

/** How an answer is read from a message: the whole text (normalised), its last number, or its first letter A-Z. */
export const ANSWER_EXTRACTORS = ["text", "last_number", "letter"] as const;

/** The settings field each outcome kind reads (`environments[].majorityVote`, `environments[].summary`). */
export const OUTCOME_SETTINGS_FIELD = { majority_vote: "majorityVote", summary: "summary" } as const satisfies Record<OutcomeEnvironmentKind, string>;
