import { z } from "zod";

/**
 * Events: what the runtime (and the runner, for status changes it decides) reports about a run.
 *
 * Wire format: one JSON object per line on the runtime's events file descriptor. Every event
 * carries a per-run `seq` (strictly increasing, starting at the `--seq-start` the runner passes),
 * so storage is idempotent on (run, seq) and a browser can resume from its last seq.
 */

/**
 * `paused`: waiting at a step boundary for `resume`. `stopped`: ended on purpose by
 * stop-after-step with a checkpoint of its last step (not `succeeded`: it did not run all its
 * steps; not `cancelled`: nothing was thrown away, it can be resumed).
 */
export const RUN_STATES = ["queued", "running", "paused", "succeeded", "failed", "cancelled", "stopped"] as const;
export const RunState = z.enum(RUN_STATES);
export type RunState = z.infer<typeof RunState>;
export const TERMINAL_STATES: readonly RunState[] = ["succeeded", "failed", "cancelled", "stopped"];
export const isTerminal = (s: RunState) => TERMINAL_STATES.includes(s);

/** Training phases, so memory can be attributed to the phase that used it. */
export const Phase = z.enum(["setup", "rollout", "reward", "reference", "update", "weight_sync", "eval", "checkpoint", "idle"]);
export type Phase = z.infer<typeof Phase>;

const base = {
  seq: z.number().int().min(1),
  /** Milliseconds since the Unix epoch, when the event happened. */
  ts: z.number().int().min(0),
};

export const StatusEvent = z
  .object({
    ...base,
    type: z.literal("status"),
    state: RunState,
    message: z.string().max(10_000).optional(),
  })
  .strict();

/** Several scalar metrics at one step, optionally for one actor (e.g. `reward/mean`, `loss`). */
export const MetricEvent = z
  .object({
    ...base,
    type: z.literal("metric"),
    step: z.number().int().min(0),
    actor: z.string().max(64).optional(),
    values: z.record(z.string().min(1).max(128), z.number()),
  })
  .strict();

export const MemoryEvent = z
  .object({
    ...base,
    type: z.literal("memory"),
    step: z.number().int().min(0),
    phase: Phase,
    /** `cpu` for host RAM, `cuda:0`… for accelerators. */
    device: z.string().min(1).max(32),
    actor: z.string().max(64).optional(),
    rssBytes: z.number().min(0).optional(),
    allocatedBytes: z.number().min(0).optional(),
    reservedBytes: z.number().min(0).optional(),
    peakBytes: z.number().min(0).optional(),
  })
  .strict();

export const EpisodeMessage = z
  .object({
    /**
     * Who spoke: an actor, or the environment (role `environment`). For the prompt (role `user`) it is
     * the dataset the row came from: a source, not an actor (readers label that message by its role).
     */
    actor: z.string().max(64),
    /** "environment": the environment speaking between actor turns (tool result, program output, game state); never trained on. */
    role: z.enum(["system", "user", "assistant", "environment"]),
    content: z.string(),
    /** True when the actor was trained on these tokens (its own completion). */
    trained: z.boolean(),
    /** The turn's index in the conversation (0 = the first turn after the prompt): its round-spec position. */
    turn: z.number().int().min(0).optional(),
    /** The speaker's reward and advantage for this episode, on each of its turns (an actor's turns share them). */
    reward: z.number().optional(),
    advantage: z.number().optional(),
  })
  .strict();

export const EpisodeEvent = z
  .object({
    ...base,
    type: z.literal("episode"),
    step: z.number().int().min(0),
    environment: z.string().max(64),
    /**
     * GRPO group (one prompt) and the sample's index within it. The runtime records whole groups
     * (`trainer.episodesPerStep`), so every sample of a group is there to read an advantage against.
     */
    group: z.number().int().min(0),
    sample: z.number().int().min(0),
    /** Index of the dataset row, so the same prompt can be followed across steps. */
    datasetRow: z.number().int().min(0).optional(),
    messages: z.array(EpisodeMessage),
    reward: z.number(),
    rewardComponents: z.record(z.string(), z.number()).default({}),
    advantage: z.number().optional(),
  })
  .strict();

export const LogEvent = z
  .object({
    ...base,
    type: z.literal("log"),
    level: z.enum(["debug", "info", "warning", "error"]),
    message: z.string().max(100_000),
  })
  .strict();

export const CheckpointEvent = z
  .object({
    ...base,
    type: z.literal("checkpoint"),
    step: z.number().int().min(0),
    actor: z.string().max(64).optional(),
    /** The actor's folder in the checkpoint (weights or adapter, optimizer state). */
    path: z.string().min(1),
    /** Bytes on disk of that folder. */
    sizeBytes: z.number().int().min(0).optional(),
  })
  .strict();

/**
 * The runtime deleted a checkpoint folder (`<work dir>/checkpoints/step-<N>`, every actor's part) to
 * keep only the newest `trainer.keepCheckpoints`. Its earlier `checkpoint` events stay in the log;
 * this one says they can no longer be resumed from.
 */
export const CheckpointPrunedEvent = z
  .object({
    ...base,
    type: z.literal("checkpoint_pruned"),
    step: z.number().int().min(0),
    /** The deleted step folder. */
    path: z.string().min(1),
    /** The `trainer.keepCheckpoints` that made room. */
    keepCheckpoints: z.number().int().min(1),
  })
  .strict();

/**
 * The residency manager moved one actor's training state between the device and host memory (between
 * phases, or for offloaded optimizer state around its step). Drawn on the memory timeline.
 */
export const OffloadEvent = z
  .object({
    ...base,
    type: z.literal("offload"),
    step: z.number().int().min(0),
    actor: z.string().max(64),
    /** `offload`: device to host; `reload`: host to device. */
    direction: z.enum(["offload", "reload"]),
    /** What moved: parameters, optimizer state, or both. */
    parts: z.array(z.enum(["params", "optimizer"])).min(1).optional(),
    /** The phase the move prepared for (a reload) or followed (an offload). */
    phase: Phase.optional(),
    /** Bytes moved (on rank 0, for a sharded actor its shard). */
    bytes: z.number().int().min(0),
    seconds: z.number().min(0),
    /** bytes / seconds / 1e9: the move's rate, to set against the host link's pinned-copy rate (absent when seconds is 0). */
    gbPerSecond: z.number().min(0).optional(),
  })
  .strict();

/**
 * Health advisories: what a researcher would want to know about a run while it trains (issue #31).
 * The runtime's detectors (gpu-runtime `troupe/advisories`) compute them per actor and per step over a
 * window of metrics and episodes; one event when a condition starts (not one per step while it lasts).
 */
export const ADVISORY_KINDS = [
  "collapse",
  "zero_variance_groups",
  "entropy_collapse",
  "length_explosion",
  "truncation",
  "kl_blowup",
  "reward_hacking",
  "non_finite",
  "staleness",
  "actor_stalled",
  // The offline learners' (sft, dpo); NaN/inf losses are `non_finite`.
  "loss_not_falling",
  "grad_norm_blowup",
  "dpo_margin_collapse",
  "dpo_logps_falling",
  "overfitting",
] as const;
export const AdvisoryKind = z.enum(ADVISORY_KINDS);
export type AdvisoryKind = z.infer<typeof AdvisoryKind>;
export const ADVISORY_SEVERITIES = ["info", "warning", "critical"] as const;
export const AdvisorySeverity = z.enum(ADVISORY_SEVERITIES);
export type AdvisorySeverity = z.infer<typeof AdvisorySeverity>;

/** A transcript an advisory cites: the `episode` event of that step, environment, GRPO group (and sample). */
export const AdvisoryEpisodeRef = z
  .object({
    step: z.number().int().min(0),
    environment: z.string().max(64).optional(),
    group: z.number().int().min(0),
    sample: z.number().int().min(0).optional(),
  })
  .strict();

export const AdvisoryEvidence = z
  .object({
    /** One sentence with the numbers, e.g. "7 of 8 completions per group are the same text over steps 81-85". */
    summary: z.string().min(1).max(2000),
    /** The steps the detector looked at (inclusive); the transcripts link filters to them. */
    fromStep: z.number().int().min(0),
    toStep: z.number().int().min(0),
    /** The measurements behind it (names are the detector's, e.g. `distinct_share`, `baseline`). */
    values: z.record(z.string().min(1).max(128), z.number()).default({}),
    /** Transcripts that show it (at most 20). */
    episodes: z.array(AdvisoryEpisodeRef).max(20).default([]),
    /** Example completions, cut to 200 characters each (at most 5). */
    examples: z.array(z.string().max(200)).max(5).default([]),
  })
  .strict();
export type AdvisoryEvidence = z.infer<typeof AdvisoryEvidence>;

export const AdvisoryEvent = z
  .object({
    ...base,
    type: z.literal("advisory"),
    /** The step at which the condition was detected. */
    step: z.number().int().min(0),
    /** The actor it is about; absent for a run-wide advisory. */
    actor: z.string().max(64).optional(),
    kind: AdvisoryKind,
    severity: AdvisorySeverity,
    evidence: AdvisoryEvidence,
    /** What to try, in words. */
    hint: z.string().min(1).max(2000),
  })
  .strict();

export const ErrorEvent = z
  .object({
    ...base,
    type: z.literal("error"),
    message: z.string().max(100_000),
    /** Dotted path of the spec field at fault, when the error is about the spec. */
    field: z.string().max(512).optional(),
    traceback: z.string().max(200_000).optional(),
  })
  .strict();

export const RunEvent = z.discriminatedUnion("type", [
  StatusEvent,
  MetricEvent,
  MemoryEvent,
  EpisodeEvent,
  LogEvent,
  CheckpointEvent,
  CheckpointPrunedEvent,
  OffloadEvent,
  AdvisoryEvent,
  ErrorEvent,
]);
export type RunEvent = z.infer<typeof RunEvent>;
export type RunEventType = RunEvent["type"];
export type MetricEvent = z.infer<typeof MetricEvent>;
export type MemoryEvent = z.infer<typeof MemoryEvent>;
export type EpisodeEvent = z.infer<typeof EpisodeEvent>;
export type StatusEvent = z.infer<typeof StatusEvent>;
export type CheckpointEvent = z.infer<typeof CheckpointEvent>;
export type CheckpointPrunedEvent = z.infer<typeof CheckpointPrunedEvent>;
export type OffloadEvent = z.infer<typeof OffloadEvent>;
export type AdvisoryEvent = z.infer<typeof AdvisoryEvent>;

/** Redis stream key of one run's live events; entries have id `<seq>-0` and field `event` (JSON). */
export const runEventStreamKey = (runId: string) => `troupe:run:${runId}:events`;
