import { z } from "zod";

/**
 * `trainer.advisories`: the health advisories' thresholds (gpu-runtime `troupe/advisories`). Absent, or any
 * field left out, gives the documented defaults below (the values every run had before they were settings).
 * One section per advisory kind (camelCase of the kind's name); the runtime maps `section.field` onto its
 * detector settings, so a field here is read by exactly one detector.
 */
const share = (d: number) => z.number().gt(0).max(1).default(d);
const ratio = (d: number) => z.number().min(0).max(1).default(d);
const atLeastZero = (d: number) => z.number().min(0).default(d);

export const AdvisoriesSpec = z
  .object({
    /** false: no advisory is computed for this run. */
    enabled: z.boolean().default(true),
    /** Steps per window; windowed checks compare an actor's last window with its first (its baseline). */
    window: z.number().int().min(2).max(1000).default(5),
    collapse: z
      .object({
        /** A character dominates a prompt's answers when it is at least this share of their characters... */
        dominantCharShare: share(0.6),
        /** ...collapse when one character dominates the answers of at least this share of the window's prompts. */
        promptShare: share(0.6),
        /** ...or when this share of transcripts gave an exact answer also given to a different prompt. */
        crossPromptShare: share(0.5),
        /** With a baseline: the per-prompt answer entropy must have fallen to at most this fraction of it. */
        entropyRatio: ratio(0.5),
      })
      .strict()
      .default({ dominantCharShare: 0.6, promptShare: 0.6, crossPromptShare: 0.5, entropyRatio: 0.5 }),
    zeroVarianceGroups: z.object({ share: share(0.5) }).strict().default({ share: 0.5 }),
    entropyCollapse: z.object({ ratio: ratio(0.2), floor: atLeastZero(0.02) }).strict().default({ ratio: 0.2, floor: 0.02 }),
    lengthExplosion: z.object({ growth: z.number().gt(1).default(3) }).strict().default({ growth: 3 }),
    truncation: z.object({ share: share(0.5) }).strict().default({ share: 0.5 }),
    klBlowup: z.object({ max: z.number().gt(0).default(1) }).strict().default({ max: 1 }),
    rewardHacking: z
      .object({ evals: z.number().int().min(2).max(100).default(3), evalDrop: atLeastZero(0.05), trainRise: atLeastZero(0.05) })
      .strict()
      .default({ evals: 3, evalDrop: 0.05, trainRise: 0.05 }),
    /** `max` absent: the spec's algorithm.async.maxStaleness (no staleness advisory without either). */
    staleness: z.object({ max: z.number().int().min(0).optional() }).strict().default({}),
    actorStalled: z.object({ gradNorm: atLeastZero(1e-8) }).strict().default({ gradNorm: 1e-8 }),
    // The offline learners' (sft, dpo) own checks.
    lossNotFalling: z.object({ minRelativeDrop: z.number().min(0).lt(1).default(0.05) }).strict().default({ minRelativeDrop: 0.05 }),
    gradNormBlowup: z.object({ factor: z.number().gt(1).default(10) }).strict().default({ factor: 10 }),
    dpoMarginCollapse: z.object({ dropShare: share(0.5) }).strict().default({ dropShare: 0.5 }),
    dpoLogpsFalling: z.object({ chosenFall: z.number().gt(0).default(0.1) }).strict().default({ chosenFall: 0.1 }),
    overfitting: z
      .object({ evals: z.number().int().min(2).max(100).default(3), evalRise: atLeastZero(0.02) })
      .strict()
      .default({ evals: 3, evalRise: 0.02 }),
  })
  .strict();
export type AdvisoriesSpec = z.infer<typeof AdvisoriesSpec>;

type Section = Exclude<keyof AdvisoriesSpec, "enabled" | "window">;

/** One threshold as the designer shows it. */
export interface AdvisoryField {
  key: string;
  label: string;
  step: number;
  /** Absent from the spec means this (`undefined`: see the section's line). */
  fallback?: number;
}

/**
 * What each section catches, one line each (the composer's "Health advisories" section), and its fields'
 * labels. Every section and field of `AdvisoriesSpec` is listed once (a test holds the two together).
 */
export const ADVISORY_SETTING_SECTIONS: readonly { key: Section; catches: string; fields: readonly AdvisoryField[] }[] = [
  {
    key: "collapse",
    catches: "The same answer whatever the prompt (e.g. every letter answered 'bbbbbbbb').",
    fields: [
      { key: "dominantCharShare", label: "Dominant character share", step: 0.05 },
      { key: "promptShare", label: "Share of prompts", step: 0.05 },
      { key: "crossPromptShare", label: "Answers shared across prompts", step: 0.05 },
      { key: "entropyRatio", label: "Answer entropy ≤ baseline ×", step: 0.05 },
    ],
  },
  { key: "zeroVarianceGroups", catches: "GRPO groups whose samples all scored alike: advantages 0, nothing learned.", fields: [{ key: "share", label: "Share of groups", step: 0.05 }] },
  {
    key: "entropyCollapse",
    catches: "Token entropy fell to a fraction of its start or near zero: exploration lost.",
    fields: [
      { key: "ratio", label: "Entropy ≤ baseline ×", step: 0.05 },
      { key: "floor", label: "Or below (nats)", step: 0.01 },
    ],
  },
  { key: "lengthExplosion", catches: "Completions grew to several times their starting length.", fields: [{ key: "growth", label: "Growth ×", step: 0.5 }] },
  { key: "truncation", catches: "Most completions came to hit maxNewTokens.", fields: [{ key: "share", label: "Share truncated", step: 0.05 }] },
  { key: "klBlowup", catches: "KL to the reference stayed high for a whole window.", fields: [{ key: "max", label: "KL per token above", step: 0.1 }] },
  {
    key: "rewardHacking",
    catches: "Training reward up while the held-out eval reward falls.",
    fields: [
      { key: "evals", label: "Evaluations falling", step: 1 },
      { key: "evalDrop", label: "Eval reward drop", step: 0.01 },
      { key: "trainRise", label: "Train reward rise", step: 0.01 },
    ],
  },
  { key: "staleness", catches: "Rollouts sampled more than K updates behind the policy.", fields: [{ key: "max", label: "K (empty: algorithm.async.maxStaleness)", step: 1 }] },
  { key: "actorStalled", catches: "An actor whose gradient norm is about zero for a whole window.", fields: [{ key: "gradNorm", label: "Gradient norm at most", step: 1e-8 }] },
  { key: "lossNotFalling", catches: "sft/dpo: the loss has not fallen below its first window's.", fields: [{ key: "minRelativeDrop", label: "Minimum relative drop", step: 0.01 }] },
  { key: "gradNormBlowup", catches: "sft/dpo: a step's gradient norm many times the previous window's.", fields: [{ key: "factor", label: "Factor ×", step: 1 }] },
  { key: "dpoMarginCollapse", catches: "dpo: the reward margin (chosen − rejected) fell well below its best window.", fields: [{ key: "dropShare", label: "Drop from best", step: 0.05 }] },
  {
    key: "dpoLogpsFalling",
    catches: "dpo: chosen and rejected log-probs both falling below the reference (likelihood displacement).",
    fields: [{ key: "chosenFall", label: "Chosen reward fall (β·Δlog p)", step: 0.05 }],
  },
  {
    key: "overfitting",
    catches: "sft/dpo: eval loss rising at each of the last evaluations while the training loss falls.",
    fields: [
      { key: "evals", label: "Evaluations rising", step: 1 },
      { key: "evalRise", label: "Relative eval-loss rise", step: 0.01 },
    ],
  },
];
