import { z } from "zod";
import { AdvisoriesSpec } from "./advisorySettings";
import { actorIssues, runIssues } from "./actorRules";
import { evalIssues } from "./evalRules";
import { OFFLINE_ALGORITHMS, learnerIssues } from "./learnerRules";
import { ppoIssues } from "./ppoRules";
import { ANSWER_EXTRACTORS, OUTCOME_ENVIRONMENT_KINDS } from "./environmentKinds";
import { outcomeIssues } from "./outcomeRules";
import { teamIssues } from "./teamRules";
import { roleIssues } from "./roleRules";
import { coryIssues } from "./coryRules";
import { hierarchicalIssues } from "./hierarchicalRules";
import { ADVANTAGE_ESTIMATORS, ALGORITHM_NAMES, HIERARCHICAL_ROLES, LOSS_TYPES, PROPOSER_REWARDS } from "./algorithms";

/**
 * RunSpec v1: one JSON document that fully describes a run.
 *
 * It is designed for everything in DESIGN.md from the first version (several actors,
 * environments with round specs, rewards, algorithm, trainer, seed), even where the
 * runtime does not support a field yet: the runtime rejects unsupported values with a
 * message naming the field, so the document never has to change shape to grow.
 */

export const SPEC_VERSION = 1 as const;

/** Names used as references between parts of the spec (actors, datasets, rewards, environments). */
export const Identifier = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, "must start with a letter or _ and contain only letters, digits, _ . -")
  .max(64);

export const TinyPreset = z.enum(["tiny-char-2l", "tiny-char-4l"]);

export const ModelSource = z.discriminatedUnion("source", [
  z
    .object({
      source: z.literal("tiny"),
      /** Built in-process from a config with a character tokenizer; nothing is downloaded. */
      preset: TinyPreset.default("tiny-char-2l"),
    })
    .strict(),
  z
    .object({
      source: z.literal("huggingface"),
      /** A Hugging Face id (`Qwen/Qwen2.5-0.5B-Instruct`); loaded from the local cache when offline. */
      id: z.string().min(1),
      revision: z.string().min(1).optional(),
    })
    .strict(),
  z
    .object({
      source: z.literal("local"),
      /** A folder on the runner host holding a Hugging Face causal LM. */
      path: z.string().min(1),
    })
    .strict(),
  z
    .object({
      source: z.literal("run"),
      /**
       * Another run's checkpoint (a pipeline: SFT, then RL). Full weights load as they are; a LoRA adapter is
       * merged into the base that run trained it on. This run's own `training.lora`, if any, is a fresh adapter.
       */
      runId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "a run id (letters, digits, _ and -)"),
      /** The checkpoint's step (that run's `checkpoint` events list them). */
      step: z.number().int().min(0),
      /** Which actor of that run; absent: the actor with this actor's name. */
      actor: Identifier.optional(),
    })
    .strict(),
]);

export const SamplingSpec = z
  .object({
    temperature: z.number().min(0).max(5).default(1.0),
    topP: z.number().gt(0).max(1).default(1.0),
    topK: z.number().int().min(0).default(0),
    maxNewTokens: z.number().int().min(1).max(131072).default(32),
  })
  .strict();

export const LoraSpec = z
  .object({
    rank: z.number().int().min(1).max(1024).default(16),
    alpha: z.number().positive().default(32),
    dropout: z.number().min(0).max(1).default(0),
    targetModules: z.array(z.string().min(1)).min(1).default(["q_proj", "k_proj", "v_proj", "o_proj"]),
  })
  .strict();

export const SchedulerSpec = z
  .object({
    type: z.enum(["constant", "linear", "cosine"]).default("constant"),
    warmupSteps: z.number().int().min(0).default(0),
  })
  .strict();

export const TrainBackend = z.enum(["torch", "fsdp2", "deepspeed"]);
export const Precision = z.enum(["fp32", "bf16"]);

export const LossType = z.enum(LOSS_TYPES);
export const AdvantageNorm = z.enum(["group", "batch", "none"]);

export const TrainingSpec = z
  .object({
    learningRate: z.number().positive().max(1).default(1e-3),
    optimizer: z.enum(["adamw", "sgd"]).default("adamw"),
    weightDecay: z.number().min(0).default(0),
    betas: z.tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)]).default([0.9, 0.999]),
    scheduler: SchedulerSpec.default({ type: "constant", warmupSteps: 0 }),
    maxGradNorm: z.number().positive().default(1.0),
    klBeta: z.number().min(0).default(0),
    clipEpsLow: z.number().positive().default(0.2),
    clipEpsHigh: z.number().positive().default(0.2),
    lossType: LossType.default("grpo"),
    advantageNorm: AdvantageNorm.default("group"),
    iterationsPerBatch: z.number().int().min(1).max(64).default(1),
    lora: LoraSpec.optional(),
    /**
     * Parameters (`params`) and optimizer state (`optimizer`) kept in (pinned) host memory and brought to the
     * device only while this actor uses them: params for its forward/backward, optimizer state for its step.
     * fsdp2: FSDP2's CPUOffloadPolicy; deepspeed: ZeRO-3 `offload_param` / `offload_optimizer` to the CPU.
     */
    offload: z
      .object({ params: z.boolean().default(false), optimizer: z.boolean().default(false) })
      .strict()
      .default({ params: false, optimizer: false }),
    /**
     * How the actor's update runs: `torch` (plain torch; data parallel with all-reduced gradients when the run
     * has several ranks), `fsdp2` (torch `fully_shard`: parameters, gradients and optimizer state sharded over
     * the ranks, ZeRO-3 semantics), `deepspeed` (ZeRO-3 through Accelerate, one DeepSpeed plugin per actor).
     */
    backend: TrainBackend.default("torch"),
    /** `bf16`: bf16 compute with fp32 master weights (and fp32 optimizer state); `fp32`: everything fp32. */
    precision: Precision.default("fp32"),
    /** Recompute activations in the backward pass instead of keeping them: less memory, ~30% more compute. */
    gradientCheckpointing: z.boolean().default(false),
  })
  .strict();

export const ApiEndpointSpec = z
  .object({
    baseUrl: z.string().url(),
    model: z.string().min(1),
    /** Name of an environment variable on the runner host that holds the key (never the key itself). */
    apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/).optional(),
    timeoutSeconds: z.number().positive().default(60),
    maxRetries: z.number().int().min(0).default(3),
  })
  .strict();

/**
 * A `backend: "vllm"` actor's colocated engine (vLLM's own names in brackets). It sleeps while the actors train
 * and wakes for the next rollout; after every update the trainer's weights reach it in memory.
 */
export const VllmSettings = z
  .object({
    /** Share of each GPU's memory the engine may take for weights and KV cache (gpu_memory_utilization). */
    gpuMemoryUtilization: z.number().gt(0).max(1).default(0.5),
    /** GPUs the engine shards the model over (tensor_parallel_size): 1, or the actor's placement.gpus count. */
    tensorParallel: z.number().int().min(1).max(64).default(1),
    /** While the actors train: 1 keeps the weights in host memory and drops the KV cache; 2 drops both (the next
     * push refills them); 0 never sleeps: the engine keeps its gpuMemoryUtilization share while the actor trains,
     * which asynchronous rollouts (algorithm.async) need, as it samples ahead meanwhile. A frozen actor has no
     * trainer to push its weights back, so it sleeps at 1 (or not at all with 0). */
    sleepLevel: z.union([z.literal(0), z.literal(1), z.literal(2)]).default(1),
    /** Longest prompt + completion in tokens (max_model_len); absent: the model's own limit. */
    maxModelLen: z.number().int().min(16).optional(),
    /** No CUDA graphs (enforce_eager): slower sampling, faster start and less memory. */
    enforceEager: z.boolean().default(false),
  })
  .strict();

export const ActorSpec = z
  .object({
    name: Identifier,
    model: ModelSource,
    backend: z.enum(["hf", "vllm", "openai"]).default("hf"),
    api: ApiEndpointSpec.optional(),
    /** Settings of the vLLM engine (`backend: "vllm"` only). */
    vllm: VllmSettings.optional(),
    trainable: z.boolean().default(true),
    training: TrainingSpec.default(TrainingSpec.parse({})),
    sampling: SamplingSpec.default(SamplingSpec.parse({})),
    /** Sampling for evaluation (`trainer.evalEvery`); `sampling` when absent. Never changes training. */
    evalSampling: SamplingSpec.optional(),
    placement: z
      .object({
        /**
         * GPU indices on the runner host, in its own numbering (as /runners lists them); the actor is sharded
         * (fsdp2, deepspeed) or replicated (torch) over them. Empty: one GPU per local model of the run, at most
         * the runner's (packages/contracts/src/gpuClaim.ts); none on a runner without GPUs (trainer.device auto).
         */
        gpus: z.array(z.number().int().min(0)).default([]),
        /** CPU ranks (gloo) when the actor runs on no GPU: how the distributed path runs without GPUs (CI). */
        processes: z.number().int().min(1).max(64).optional(),
      })
      .strict()
      .default({ gpus: [] }),
  })
  .strict()
  .superRefine((actor, ctx) => {
    // Every rule about combinations of actor settings lives in actorRules.ts (one place, unit-tested).
    for (const issue of actorIssues(actor)) ctx.addIssue({ code: "custom", ...issue });
  });

export const BuiltinDatasetName = z.enum(["echo_letter", "reverse_word"]);

export const DatasetSource = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("builtin"),
      /** Toy tasks generated in-process from the seed, for demos and learning checks. */
      name: BuiltinDatasetName,
      size: z.number().int().min(1).max(1_000_000).default(256),
    })
    .strict(),
  z
    .object({
      kind: z.literal("file"),
      /** Path on the runner host, relative to the run's work folder or absolute. */
      path: z.string().min(1),
      format: z.enum(["jsonl", "csv", "parquet"]),
    })
    .strict(),
  z
    .object({
      kind: z.literal("stored"),
      /** A dataset uploaded to Troupe (Dataset row). The runner writes it into the run folder and hands the
       * runtime a  source, so the runtime never sees this kind. */
      datasetId: z.string().min(1),
      format: z.enum(["jsonl", "csv", "parquet"]),
    })
    .strict(),
  z
    .object({
      kind: z.literal("huggingface"),
      /** A Hugging Face dataset id (`openai/gsm8k`), read with `datasets` offline from the runner host's cache
       * (HF_HOME / HF_DATASETS_CACHE, or the hub cache that `hf download --repo-type dataset` fills). */
      id: z.string().min(1),
      config: z.string().min(1).optional(),
      split: z.string().min(1).default("train"),
    })
    .strict(),
]);

export const DatasetSpec = z
  .object({
    name: Identifier,
    source: DatasetSource,
    /** Fraction (0..1) of rows held out for evaluation; 0 means no eval split. */
    evalFraction: z.number().min(0).lt(1).default(0),
  })
  .strict();

/** `majority_vote` and `debate_verdict` score a whole conversation per actor (scope "conversation"):
 * a vote over the actors' last answers, or a judge's verdict, decides each actor's reward. */
export const BuiltinRewardName = z.enum(["letter_match", "exact_match", "length_penalty", "majority_vote", "debate_verdict", "math_answer"]);

/** How a judge's answer becomes a score: the first number, yes (1) / no (0), or a regex's first group. */
export const JudgeParser = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("number"),
      /** Answers outside [min, max] are failures (scored failureScore, logged); absent: no bound. */
      min: z.number().optional(),
      max: z.number().optional(),
    })
    .strict(),
  z.object({ kind: z.literal("yes_no") }).strict(),
  z
    .object({
      kind: z.literal("regex"),
      /** Its first group (or the group named `score`) is the score, read as a number. */
      pattern: z.string().min(1).max(1000),
    })
    .strict(),
]);

/**
 * A reward that asks an actor of the run (frozen: local, or behind an OpenAI-compatible API) to judge. `prompt` is
 * a Jinja template over `prompt` and `completion` (completion scope), `conversation`, `transcript` and
 * `actor_name` (conversation scope), and the row's dataset columns; the reply is parsed by `parser`. A reply that
 * does not parse scores the reward's failureScore, with a log line. Answers are cached by rendered prompt.
 */
export const JudgeRewardSource = z
  .object({
    kind: z.literal("judge"),
    actor: Identifier,
    prompt: z.string().min(1).max(100_000),
    parser: JudgeParser.default({ kind: "number" }),
    /** Prompts sent to the judge per call (an API judge gets them concurrently, a local one as one batch). */
    batchSize: z.number().int().min(1).max(1024).default(16),
    cache: z.boolean().default(true),
  })
  .strict();

export const RewardSpec = z
  .object({
    name: Identifier,
    source: z.discriminatedUnion("kind", [
      z
        .object({
          kind: z.literal("builtin"),
          name: BuiltinRewardName,
          params: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).default({}),
        })
        .strict(),
      z
        .object({
          kind: z.literal("python"),
          /** Python source defining the entrypoint; runs out of process with limits. */
          code: z.string().min(1),
          entrypoint: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default("reward"),
        })
        .strict(),
      JudgeRewardSource,
    ]),
    /** `completion`: f(prompt, completion, **row); `conversation`: f(conversation, actor_name, **row). */
    scope: z.enum(["completion", "conversation"]).default("completion"),
    timeoutSeconds: z.number().positive().max(600).default(10),
    memoryMb: z.number().int().min(16).max(65536).default(512),
    /** Score of a call that raised, timed out or returned a non-number (python rewards); logged with its row. */
    failureScore: z.number().default(0),
    /** The run fails after this many failed calls in a row (python rewards): the code is broken. */
    maxFailuresInARow: z.number().int().min(1).max(100_000).default(32),
  })
  .strict();

/** Environments where the environment itself speaks between actor turns (tool results, program output). */
export const ACTING_ENVIRONMENT_KINDS = ["code", "tools", "python"] as const;

export const CodeEnvironmentSettings = z
  .object({
    /** Dataset column with the test cases: a list (or JSON string) of `{input, output}` (stdin, expected stdout). */
    testsField: z.string().min(1).default("tests"),
    /** Attempts per episode: after a failing attempt the failures are fed back and the model tries again. */
    maxTries: z.number().int().min(1).max(16).default(2),
  })
  .strict();

/**
 * A Model Context Protocol server whose tools the actor may call: its tool list comes from the server and every
 * call goes through it. `command`: a local server over stdio, started inside the run's sandbox (no network; it
 * sees the run folder and this Python's packages read-only). `url`: a server over streamable HTTP, reached from
 * the runtime (its host must be on the operator's TROUPE_API_HOSTS, as for API actors).
 */
const mcpTimeout = z.number().positive().max(600).default(30);
export const McpToolServer = z.union([
  z
    .object({
      kind: z.literal("mcp"),
      command: z.array(z.string().min(1).max(4096)).min(1).max(64),
      /** Extra environment variables for the server (nothing of the runner's environment reaches it). */
      env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(4096)).optional(),
      timeoutSeconds: mcpTimeout,
    })
    .strict(),
  z
    .object({
      kind: z.literal("mcp"),
      url: z.string().regex(/^https?:\/\/[^\s]+$/, "an http:// or https:// URL"),
      timeoutSeconds: mcpTimeout,
    })
    .strict(),
]);
export type McpToolServer = z.infer<typeof McpToolServer>;

export const ToolsEnvironmentSettings = z
  .object({
    /** Built-in tools: `calculator` (arithmetic) and `python` (runs code in the sandbox, returns its output). */
    builtin: z.array(z.enum(["calculator", "python"])).default(["calculator"]),
    /** Python source defining user tools: every public top-level function is a tool (its docstring the description); runs in the sandbox. */
    code: z.string().min(1).optional(),
    /** Tool calls answered per episode; the episode ends at the first message with no tool call. */
    maxCalls: z.number().int().min(1).max(64).default(4),
    /** MCP servers whose tools the actor may call, beside the built-in and code tools. */
    mcp: z.array(McpToolServer).max(8).optional(),
  })
  .strict();

/** Limits of the one sandbox that Python rewards, tools and code environments run in (bubblewrap). */
export const SandboxSpec = z
  .object({
    network: z.literal(false).default(false),
    memoryMb: z.number().int().min(16).max(65536).default(512),
    cpuSeconds: z.number().int().min(1).max(3600).default(10),
    processes: z.number().int().min(1).max(4096).default(64),
    outputBytes: z.number().int().min(1).max(1_000_000_000).default(1_000_000),
  })
  .strict();

export const EnvironmentReward = z
  .object({ reward: Identifier, weight: z.number().default(1) })
  .strict();

/** Games PettingZoo plays (an optional extra on the runner); `chess` is played by chess.js in a Node server. */
export const PETTINGZOO_GAMES = ["tic_tac_toe", "connect_four"] as const;
export const GAME_NAMES = [...PETTINGZOO_GAMES, "chess"] as const;

/** `game` environments: a two-player board game that speaks between moves (gpu-runtime/src/troupe/games). */
export const GameEnvironmentSettings = z
  .object({
    name: z.enum(GAME_NAMES).default("tic_tac_toe"),
    /** `random`: one actor against the built-in frozen random player; `actors`: two actors play each other (the first is X). */
    opponent: z.enum(["random", "actors"]).default("random"),
    /** Against the random player: the actor's side (X moves first); `alternate`: odd samples of a group move second. */
    actorPlays: z.enum(["first", "second", "alternate"]).default("first"),
    /** Added per legal move (component `legal_moves`): shaping while a model learns what a move looks like. */
    legalMoveReward: z.number().min(0).max(100).default(0),
    /** List the legal moves under every board the player to move reads (chess: SAN; tic_tac_toe, connect_four: their numbers), so a model can learn to pick one; absent: off. */
    showLegalMoves: z.boolean().optional(),
    /** chess: the board as its FEN line (compact) or chess.js's 8-line ASCII diagram; absent: fen. */
    board: z.enum(["fen", "ascii"]).optional(),
    /**
     * chess: how an actor names its move. `san`: a move word (`Nf3`, `g1f3`) read from its message; `index`: the
     * legal moves are listed numbered under every board (`0:Na3 1:Nc3 ...`) and the actor answers with a number
     * from the list (its first number), so a model that cannot yet write chess can still pick legal moves. An
     * unreadable or out-of-range answer forfeits, as an illegal move does. Absent: san.
     */
    moveFormat: z.enum(["san", "index"]).optional(),
    /**
     * chess: a game cut off at the environment's `maxTurns` moves of one actor is a `draw`, or adjudicated by
     * `material` (pawn 1, knight and bishop 3, rook 5, queen 9): the side ahead wins, equal material draws.
     * Absent: draw.
     */
    cutoff: z.enum(["draw", "material"]).optional(),
  })
  .strict();

/** `remote` environments: calls to a server of the reset/step protocol (gpu-runtime/README.md, "remote"). */
export const RemoteEnvironmentSettings = z
  .object({
    /** Per call; a call past it fails that episode (logged, trains nothing, scores `failureScore`). */
    timeoutSeconds: z.number().positive().max(3600).default(30),
    /** What every actor of a failed episode scores (a timeout, a crash, a reply that breaks the protocol). */
    failureScore: z.number().default(0),
    /**
     * How many sessions may have a call in flight at once (one HTTP connection or gRPC stream each); the rest
     * wait their turn in the runner (back-pressure), so 10,000 episodes queue instead of opening 10,000 sockets.
     */
    maxConcurrentSessions: z.number().int().min(1).max(100000).default(256),
    /**
     * Per session: the seconds its calls may take in all (each call's time from leaving the queue to its reply;
     * the model's turns between calls do not count). A session past it fails as a timeout (scores `failureScore`).
     * Absent: only `timeoutSeconds` per call.
     */
    sessionTimeoutSeconds: z.number().positive().max(86400).optional(),
  })
  .strict();

/** Every environment kind, the one list (the runtime's builders are registered under these names). */
export const ENVIRONMENT_KINDS = [
  "single_turn",
  "collaborative",
  "parallel",
  "adversarial",
  ...ACTING_ENVIRONMENT_KINDS,
  "game",
  "remote",
  ...OUTCOME_ENVIRONMENT_KINDS,
] as const;

/**
 * Each agent's reward = outcome × [the team's final answer is right] + own × [its own answer is right].
 * `outcome` alone is a shared team reward; `own` alone trains each agent as if alone.
 */
export const RewardWeightsSpec = z
  .object({
    outcome: z.number().min(0).max(100).default(1),
    own: z.number().min(0).max(100).default(0),
  })
  .strict();

/** `majority_vote` and `summary` environments: where the right answer is, how answers are read, the reward weights. */
export const OutcomeEnvironmentSettings = z
  .object({
    /** Dataset column holding the right answer. */
    answerField: z.string().min(1).default("answer"),
    /** How each message's answer is read (and the dataset's answer, the same way). */
    extract: z.enum(ANSWER_EXTRACTORS).default("last_number"),
    rewardWeights: RewardWeightsSpec.default(RewardWeightsSpec.parse({})),
  })
  .strict();

/** `majority_vote`: every actor answers; the answer with strictly the most votes is the team's (a tie decides nothing: wrong). */
export const MajorityVoteSettings = OutcomeEnvironmentSettings;

/** `summary`: every actor but the summariser answers; the summariser reads all answers and writes the team's. */
export const SummarySettings = OutcomeEnvironmentSettings.extend({
  /** The actor who reads the answers and writes the final one; absent: the environment's last actor. */
  summariser: Identifier.optional(),
}).strict();

export const EnvironmentSpec = z
  .object({
    name: Identifier,
    kind: z.enum(ENVIRONMENT_KINDS).default("single_turn"),
    /** `python` environments: the `troupe.Environment` subclass, `module:Class` or `file.py:Class` (run folder). */
    entrypoint: z.string().regex(/^[^:\s]+:[A-Za-z_][A-Za-z0-9_]*$/, "must be module:Class or file.py:Class").optional(),
    /** `python` environments: settings handed to the class as `self.params`. */
    params: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).optional(),
    /** `code` environments: how the model's program is tested. */
    code: CodeEnvironmentSettings.optional(),
    /** `tools` environments: the tools the actor may call. */
    tools: ToolsEnvironmentSettings.optional(),
    /** `game` environments: which game, against whom. */
    game: GameEnvironmentSettings.optional(),
    /**
     * `remote` environments: the server's URL, reachable from the runner; its scheme is the transport: JSON over
     * HTTP (`http://host:port`, `https://…`) or gRPC (`grpc://host:port`, plaintext, no path; the runner needs
     * grpcio: contracts RUNNER_REQUIREMENTS "grpc").
     */
    url: z
      .string()
      .regex(/^(https?:\/\/\S+|grpc:\/\/[^\s/]+\/?)$/, "must be an http:// or https:// URL, or grpc://host:port")
      .optional(),
    /** `remote` environments: timeouts and the failed-episode score. */
    remote: RemoteEnvironmentSettings.optional(),
    /** `majority_vote` environments: answer column, how answers are read, reward weights (absent: the defaults). */
    majorityVote: MajorityVoteSettings.optional(),
    /** `summary` environments: the summariser, answer column, how answers are read, reward weights (absent: the defaults). */
    summary: SummarySettings.optional(),
    dataset: Identifier,
    /** Actors taking part, by name. A single-turn environment has exactly one. */
    actors: z.array(Identifier).min(1),
    /**
     * Role name -> actor (collaborative, adversarial, parallel and game environments): the round spec and the game's
     * seats name roles, each played by its actor. Two roles on one actor are one policy (one set of weights, one
     * update over both roles' tokens: self-play is `{X: policy, O: policy}`); metrics (`role/<role>/...`) and
     * transcripts keep the roles apart. Every actor listed in `actors` plays at least one role; `systemPrompts` and
     * `visibility` then name roles too. Absent: each actor is its own role.
     */
    roles: z.record(Identifier, Identifier).optional(),
    /** Who speaks when, e.g. `Bob -> Alice -> (Bob/Alice)*5`. Required for collaborative environments. */
    roundSpec: z.string().min(1).optional(),
    prompt: z
      .object({
        /** Dataset column holding the prompt text. */
        field: z.string().min(1).default("prompt"),
        /** Jinja template over dataset fields; overrides `field` when set. */
        template: z.string().min(1).optional(),
        applyChatTemplate: z.boolean().default(true),
      })
      .strict()
      .default({ field: "prompt", applyChatTemplate: true }),
    systemPrompts: z.record(Identifier, z.string()).default({}),
    /**
     * Whose messages each actor reads (multi-actor environments): actor -> speakers it sees.
     * An actor always sees its own messages; an actor not listed sees everyone.
     */
    visibility: z.record(Identifier, z.array(Identifier)).optional(),
    /** At least one, except where the environment scores episodes itself (code, python, game, remote). */
    rewards: z.array(EnvironmentReward).default([]),
    /** sft: the dataset column holding the target completion (absent: `completion`). */
    completionField: z.string().min(1).optional(),
    /** dpo: the dataset columns holding the preferred and the dispreferred completion (absent: `chosen`, `rejected`). */
    chosenField: z.string().min(1).optional(),
    rejectedField: z.string().min(1).optional(),
    /** Share of each batch drawn from this environment when several are combined. */
    weight: z.number().positive().default(1),
    maxTurns: z.number().int().min(1).max(1024).default(16),
    /**
     * Never trained on: every row of its dataset is evaluated every `trainer.evalEvery` steps (and once in
     * an eval-only run, `trainer.steps: 0`), reported as `eval/<environment>/...` metrics.
     */
    evalOnly: z.boolean().default(false),
  })
  .strict();

/** DAPO dynamic sampling: groups whose rewards are all equal teach nothing (zero advantage). */
export const DynamicSamplingSpec = z
  .object({
    /** Drop zero-variance groups and sample new prompts in their place (single-turn environments). */
    enabled: z.boolean().default(false),
    /** Most extra sampling rounds per step; after them the step trains on the groups it has. */
    maxRounds: z.number().int().min(0).max(64).default(3),
  })
  .strict();

/** Completions that reached maxNewTokens without the sampler drawing an end-of-sequence token. */
export const OverlongSpec = z
  .object({
    /** "off": train on them as they are; "filter": mask them out of the loss; "penalty": DAPO's soft length penalty. */
    mode: z.enum(["off", "filter", "penalty"]).default("off"),
    /** penalty: over the last `bufferTokens` before maxNewTokens the penalty ramps from 0 to -`penalty`. */
    bufferTokens: z.number().int().min(1).default(16),
    /** penalty: subtracted in full from the reward of a truncated completion. */
    penalty: z.number().positive().default(1),
  })
  .strict();

/**
 * Correction for sampling from a distribution other than the trainer's (a vLLM engine's bf16 kernels, a stale
 * copy under async rollouts). `tis`: truncated importance sampling, as verl and TRL offer: each token's
 * policy-gradient term is weighted by min(exp(trainer log-prob before the update - sampler log-prob), cap).
 */
export const ImportanceCorrectionSpec = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("tis"),
      /** Largest weight; at least 1 (a cap below 1 would shrink every token's gradient, also where sampler and trainer agree). */
      cap: z.number().min(1, "cap must be at least 1: weights are min(ratio, cap), and a cap below 1 shrinks every token's gradient").max(1000).default(2),
    })
    .strict(),
]);

/**
 * Asynchronous rollouts: the next batches are sampled (by a producer with its own copy of the weights) while the
 * current one trains. A sample is never more than `maxStaleness` updates older than the policy it trains;
 * 0 samples each batch after the previous update, as the synchronous loop does.
 */
export const AsyncRolloutSpec = z
  .object({
    maxStaleness: z.number().int().min(0).max(16).default(1),
  })
  .strict();

/** DPO loss variants (TRL 1.13 `DPOConfig.loss_type` names): DPO, SLiC's hinge, IPO, robust DPO. */
export const DpoLossType = z.enum(["sigmoid", "hinge", "ipo", "robust"]);

export const AlgorithmSpec = z
  .object({
    name: z.enum(ALGORITHM_NAMES).default("grpo"),
    /** Completions sampled per prompt; advantages are normalised within each group. */
    groupSize: z.number().int().min(2).max(1024).default(8),
    dynamicSampling: DynamicSamplingSpec.default(DynamicSamplingSpec.parse({})),
    overlong: OverlongSpec.default(OverlongSpec.parse({})),
    /** Absent: no correction (the sampler/trainer log-prob gap is still reported as logprob_gap). */
    importanceCorrection: ImportanceCorrectionSpec.optional(),
    /** Absent: synchronous rollouts (sample, then train, each step). */
    async: AsyncRolloutSpec.optional(),
    /** dpo: how far the policy may move from the reference (TRL's `beta`; for ipo, the regulariser tau). */
    beta: z.number().positive().max(100).default(0.1),
    /** dpo: the loss variant, with TRL's `loss_type` names. */
    dpoLoss: DpoLossType.default("sigmoid"),
    /** dpo `robust`: the probability that a preference label is flipped. */
    labelSmoothing: z.number().min(0).lt(0.5).default(0),
    /** ppo, ippo, mappo: the discount over an actor's tokens (mappo: over its turns) in GAE. */
    gamma: z.number().min(0).max(1).default(1),
    /** ppo, ippo, mappo: GAE's lambda (1: Monte Carlo returns; 0: one-step TD). */
    lambda: z.number().min(0).max(1).default(0.95),
    /** ppo, ippo, mappo: how far a value may move from the rollout's value per update (PPO2's value clipping); 0: no clipping. */
    valueClip: z.number().min(0).max(1000).default(0.2),
    /** ppo, ippo, mappo: the critics' learning rate; absent: each critic uses its actor's `training.learningRate`. */
    criticLearningRate: z.number().positive().max(1).optional(),
    /**
     * Weight of the entropy bonus in every trainable actor's policy loss (loss - entropyCoef * mean token entropy).
     * Absent: 0, as in TRL, verl and OpenRLHF (pretrained LLMs train with 0 to 0.001). Tiny models trained from
     * scratch need more: mappo on the secret digit collapsed onto one answer without 0.05 (gpu-runtime/README.md).
     */
    entropyCoef: z.number().min(0).max(1).optional(),
    /**
     * ppo, ippo, mappo: the critics learn normalised returns (running mean and std of the returns, the MAPPO paper's
     * value normalisation); GAE reads their values denormalised. Absent: on.
     */
    valueNorm: z.boolean().optional(),
    /**
     * The GRPO family's advantages: "group" (each reward against its group's, `training.advantageNorm`) or "rae"
     * (SPIRAL's role-conditioned advantage: each reward against a moving average of the rewards that actor earned
     * in that environment's seat, for zero-sum self-play where a group's mean says nothing about a role).
     */
    advantage: z.enum(ADVANTAGE_ESTIMATORS).default("group"),
    /** rae: baseline <- decay * baseline + (1 - decay) * mean reward of the step, per actor and environment. */
    rae: z.object({ decay: z.number().min(0).lt(1).default(0.95) }).strict().default({ decay: 0.95 }),
    /**
     * hierarchical: in an environment whose roles include `proposer` and `solver` (roundSpec "proposer -> solver"),
     * each row's groupSize episodes are groupSize / solverSamples proposals, each answered solverSamples times
     * (the proposer speaks once per proposal). The solver's advantage: its reward against the other answers to the
     * same proposal; the proposer's reward: from p, the mean of those answers' rewards clamped into [0, 1]
     * ("learnability" p(1-p): highest when solved half the time; "frontier" 1-p, 0 when never or always solved;
     * "difficulty" 1-p; "own": the environment's rewards for the proposer, untouched), its advantage against the
     * row's other proposals.
     */
    hierarchical: z
      .object({
        proposer: z.string().min(1).default(HIERARCHICAL_ROLES[0]),
        solver: z.string().min(1).default(HIERARCHICAL_ROLES[1]),
        solverSamples: z.number().int().min(2).max(256).default(4),
        proposerReward: z.enum(PROPOSER_REWARDS).default("learnability"),
      })
      .strict()
      .default({ proposer: HIERARCHICAL_ROLES[0], solver: HIERARCHICAL_ROLES[1], solverSamples: 4, proposerReward: "learnability" }),
    /** qmix: the width of the mixing network (the hypernetworks' outputs per agent). */
    qmix: z.object({ mixingEmbedDim: z.number().int().min(1).max(1024).default(32) }).strict().default({ mixingEmbedDim: 32 }),
    /**
     * happo: the factor (the product of the earlier agents' new/old probability ratios of an episode) is clipped
     * into [1/factorClip, factorClip], as a whole message's ratio can be far from 1.
     */
    happo: z.object({ factorClip: z.number().min(1).max(1000).default(10) }).strict().default({ factorClip: 10 }),
    /**
     * cory: the two actors playing `pioneer` and `observer` (environments[].roles) exchange roles every `swapEvery`
     * steps (steps 1..swapEvery as mapped, the next swapEvery swapped, ...), so each learns both to answer alone
     * and to answer from the other's answer (CORY's role exchange).
     */
    cory: z.object({ swapEvery: z.number().int().min(1).max(100000).default(10) }).strict().default({ swapEvery: 10 }),
  })
  .strict();

/**
 * Mirrors of a run in the trackers researchers keep beside the dashboard: every metric (as `actor/name`), the
 * RunSpec as the config, and the transcripts as a table. Their files go under the run's folder (never an
 * absolute path or `..`, so an editor cannot write elsewhere on the runner host).
 */
const trackerDir = z
  .string()
  .min(1)
  .max(200)
  .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._\/-]+$/, "a folder inside the run folder: letters, digits, . _ - and /, no leading / and no ..");
export const TrackerSpec = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("wandb"),
      project: z.string().min(1).max(128),
      /** `offline` writes W&B run files under the run folder (`wandb sync` uploads them later); `online` streams to the W&B server in WANDB_API_KEY's account. */
      mode: z.enum(["offline", "online"]).default("offline"),
      entity: z.string().min(1).max(128).optional(),
      /** The W&B run's display name; absent: the RunSpec's name. */
      name: z.string().min(1).max(200).optional(),
      dir: trackerDir.default("wandb"),
    })
    .strict(),
  z
    .object({
      kind: z.literal("tensorboard"),
      /** Event files go here, inside the run folder (`tensorboard --logdir` on it). */
      dir: trackerDir.default("tensorboard"),
    })
    .strict(),
]);
export type TrackerSpec = z.infer<typeof TrackerSpec>;
export const TRACKER_KINDS = ["wandb", "tensorboard"] as const;

/** The fixed opponents Elo ratings are played against (gpu-runtime troupe/ratings): `random` (a uniformly random legal move; the anchor, rated 1000) and `first_move` (always the lowest-numbered legal move, a scripted player). */
export const RATING_OPPONENTS = ["random", "first_move"] as const;
export const RatingOpponent = z.enum(RATING_OPPONENTS);

/**
 * Elo per checkpoint, for game environments: at each checkpoint (and the last step, when checkpoints are on) each
 * actor's current weights play `gamesPerPair` games (sides alternating) against the fixed `opponents`, the other
 * actors, and the frozen snapshots of every actor kept from the last `snapshots` checkpoints (host memory). Ratings
 * are a Bradley-Terry maximum-likelihood fit over every game played so far (Elo scale: 400 points = 10:1 odds), the
 * random player anchored at 1000, reported as metrics `elo/rating`, `elo/ci95`, `elo/games` per actor. Runs
 * without checkpoints or without a game environment play none.
 */
export const RatingsSpec = z
  .object({
    /** Games per pairing at each checkpoint; 0 turns ratings off. */
    gamesPerPair: z.number().int().min(0).max(1024).default(8),
    /** The fixed opponents played; `random`, the anchor (1000), is played whether listed or not. */
    opponents: z.array(RatingOpponent).max(RATING_OPPONENTS.length).default(["random", "first_move"]),
    /** Earlier checkpoints of each actor kept as frozen opponents (copies in host memory). */
    snapshots: z.number().int().min(0).max(32).default(3),
  })
  .strict();
export type RatingsSpec = z.infer<typeof RatingsSpec>;

export const TrainerSpec = z
  .object({
    /** Training steps; 0 is an eval-only run: load the models, evaluate every environment once, finish. */
    steps: z.number().int().min(0).max(10_000_000).default(100),
    /** Prompts per step; each yields `groupSize` completions. */
    promptsPerStep: z.number().int().min(1).max(65536).default(4),
    evalEvery: z.number().int().min(0).default(0),
    /** Save a checkpoint (weights or adapters, optimizer, RNG states, data position) every N steps; 0 = never. */
    checkpointEvery: z.number().int().min(0).default(0),
    /** How many of the newest checkpoints to keep on disk; 0 keeps all. */
    keepCheckpoints: z.number().int().min(0).default(0),
    /**
     * Transcripts recorded per step, for the run page: whole GRPO groups, every sample of each (so each
     * sample's advantage can be read against its group). Counts samples, rounded up to whole groups: with
     * groupSize 8, 4 records one group of 8 and 10 records two; 0 records none.
     */
    episodesPerStep: z
      .number()
      .int()
      .min(0)
      .max(4096)
      .default(4)
      .describe(
        "Transcripts recorded per step, as whole GRPO groups (every sample of a group, with its reward and advantage): " +
          "counts samples, rounded up to whole groups (groupSize 8: 4 records one group of 8, 10 records two); 0 records none",
      ),
    device: z.enum(["auto", "cpu", "cuda"]).default("auto"),
    /** Torch intra-op threads on CPU; 0 lets torch decide. */
    cpuThreads: z.number().int().min(0).max(512).default(0),
    maxDurationSeconds: z.number().int().positive().optional(),
    /**
     * Between phases (rollout, each actor's update), move the training state of the models not in use to host
     * memory, so the device holds only the active model's. Absent: on when two or more local models share a
     * device, off otherwise. Each move is reported as an `offload` event (bytes, seconds).
     */
    offloadBetweenPhases: z.boolean().optional(),
    /**
     * Sequences per forward/backward pass on each rank; the step's batch is split into micro-batches whose
     * gradients accumulate, normalised as the whole batch would be (same loss, less activation memory).
     * `"auto"` (the default): the largest size whose activations fit the device's free memory at the update
     * (torch.cuda.mem_get_info; the same per-token activation model as memory/actorMemory.ts), capped by the
     * rank's rows; on a CPU, where there is no device budget, all rows at once unless the runner's
     * TROUPE_MEMORY_BUDGET_BYTES sets one (gpu-runtime algorithms/micro_batch.py). A number at least the
     * rows per rank: the whole batch in one pass.
     */
    microBatchSize: z.union([z.number().int().min(1).max(65536), z.literal("auto")]).default("auto"),
    /** Mirror the run to W&B and/or TensorBoard (metrics, config, transcripts); absent: none. */
    trackers: z.array(TrackerSpec).max(8).optional(),
    /** Elo per checkpoint in game environments (RatingsSpec); absent: the defaults, on whenever checkpoints are. */
    ratings: RatingsSpec.optional(),
    /** Health advisories' thresholds (advisorySettings.ts); absent: every default. */
    advisories: AdvisoriesSpec.optional(),
  })
  .strict();

/**
 * Where the run's ranks go. `local`: on the runner host (`torch.distributed.run` under the runtime).
 * `ray`: Ray places one trainer rank per bundle of a placement group, across the Ray cluster's nodes; torch
 * distributed does the collectives.
 */
export const ClusterSpec = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("local") }).strict(),
  z
    .object({
      kind: z.literal("ray"),
      /** A running Ray cluster (`auto`, `ray://host:10001`); absent starts a local one for this run. */
      address: z.string().min(1).optional(),
      /** Placement group strategy for the trainer ranks' bundles. */
      strategy: z.enum(["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"]).default("PACK"),
    })
    .strict(),
]);

/**
 * Rollout workers (issue 28): processes of their own that sample with the actors' engines while the trainer
 * trains; after every update the trainer broadcasts the new weights to them, one parameter (in chunks) at a time,
 * never through disk. `count` workers, either on GPUs of their own (`gpus`: device ids, one per worker; NCCL,
 * not built yet) or as CPU processes (`processes: true`; gloo). Each step's prompts are split among them.
 */
export const RolloutWorkersSpec = z
  .object({
    count: z.number().int().min(1).max(64),
    gpus: z.array(z.number().int().min(0)).min(1).max(64).optional(),
    processes: z.literal(true).optional(),
  })
  .strict()
  .superRefine((w, ctx) => {
    if ((w.gpus === undefined) === (w.processes === undefined)) {
      ctx.addIssue({ code: "custom", path: ["processes"], message: "give the workers either gpus (device ids) or processes: true, not both or neither" });
    } else if (w.gpus !== undefined && w.gpus.length !== w.count) {
      ctx.addIssue({ code: "custom", path: ["gpus"], message: `one GPU per worker: ${w.count} workers, ${w.gpus.length} GPUs` });
    }
  });

/** Where rollouts run; absent: in the trainer's own processes. */
export const RolloutSpec = z
  .object({
    workers: RolloutWorkersSpec.optional(),
  })
  .strict();

export const RunSpec = z
  .object({
    specVersion: z.literal(SPEC_VERSION),
    name: z.string().min(1).max(200),
    description: z.string().max(10_000).default(""),
    seed: z.number().int().min(0).max(2 ** 31 - 1).default(0),
    actors: z.array(ActorSpec).min(1),
    datasets: z.array(DatasetSpec).min(1),
    /** Reward functions; an sft or dpo run may have none. */
    rewards: z.array(RewardSpec).default([]),
    environments: z.array(EnvironmentSpec).min(1),
    algorithm: AlgorithmSpec.default(AlgorithmSpec.parse({})),
    trainer: TrainerSpec.default(TrainerSpec.parse({})),
    cluster: ClusterSpec.default({ kind: "local" }),
    /** Rollout workers of their own (RolloutSpec); absent: the trainer samples. */
    rollout: RolloutSpec.optional(),
    /** Limits for untrusted code (Python rewards, tools, code environments); the sandbox is always on. */
    sandbox: SandboxSpec.default(SandboxSpec.parse({})),
    tags: z.array(z.string().min(1).max(64)).default([]),
  })
  .strict()
  .superRefine((spec, ctx) => {
    const unique = (items: { name: string }[], key: string) => {
      const seen = new Set<string>();
      items.forEach((item, i) => {
        if (seen.has(item.name)) {
          ctx.addIssue({ code: "custom", path: [key, i, "name"], message: `duplicate name "${item.name}"` });
        }
        seen.add(item.name);
      });
      return seen;
    };
    const actors = unique(spec.actors, "actors");
    const datasets = unique(spec.datasets, "datasets");
    const rewards = unique(spec.rewards, "rewards");
    unique(spec.environments, "environments");
    spec.rewards.forEach((r, i) => {
      if (r.source.kind !== "judge") return;
      const judge = spec.actors.find((a) => a.name === (r.source as { actor: string }).actor);
      if (!judge) {
        ctx.addIssue({ code: "custom", path: ["rewards", i, "source", "actor"], message: `unknown actor "${r.source.actor}"` });
      } else if (judge.trainable) {
        ctx.addIssue({ code: "custom", path: ["rewards", i, "source", "actor"], message: `a judge is a frozen actor: "${judge.name}" is trainable (set its trainable to false, or judge with another actor)` });
      }
    });
    spec.environments.forEach((env, i) => {
      if (!datasets.has(env.dataset)) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "dataset"], message: `unknown dataset "${env.dataset}"` });
      }
      env.actors.forEach((a, j) => {
        if (!actors.has(a)) {
          ctx.addIssue({ code: "custom", path: ["environments", i, "actors", j], message: `unknown actor "${a}"` });
        }
      });
      env.rewards.forEach((r, j) => {
        if (!rewards.has(r.reward)) {
          ctx.addIssue({ code: "custom", path: ["environments", i, "rewards", j, "reward"], message: `unknown reward "${r.reward}"` });
        }
      });
      if (env.kind === "single_turn" && env.actors.length !== 1) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "actors"], message: "a single_turn environment has exactly one actor" });
      }
      const acting = (ACTING_ENVIRONMENT_KINDS as readonly string[]).includes(env.kind);
      if (env.rewards.length === 0 && !["code", "python", "game", "remote", ...OUTCOME_ENVIRONMENT_KINDS].includes(env.kind) && !OFFLINE_ALGORITHMS.includes(spec.algorithm.name)) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "rewards"], message: `a ${env.kind} environment needs at least one reward` });
      }
      if (env.kind === "python" && !env.entrypoint) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "entrypoint"], message: 'a python environment needs an entrypoint ("module:Class" or "file.py:Class")' });
      }
      if (env.kind !== "python" && env.entrypoint !== undefined) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "entrypoint"], message: "only python environments take an entrypoint" });
      }
      if (env.kind !== "python" && env.params !== undefined) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "params"], message: "only python environments take params" });
      }
      if (env.kind !== "code" && env.code !== undefined) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "code"], message: "only code environments take code settings" });
      }
      if (env.kind !== "tools" && env.tools !== undefined) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "tools"], message: "only tools environments take tools settings" });
      }
      if (acting && env.kind !== "python" && env.actors.length !== 1) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "actors"], message: `a ${env.kind} environment has exactly one actor` });
      }
      if (env.kind === "collaborative" && !env.roundSpec) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "roundSpec"], message: "a collaborative environment needs a roundSpec" });
      }
      if (env.kind === "remote" && !env.url) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "url"], message: 'a remote environment needs url: "http://host:port" or "grpc://host:port" of a server of the protocol' });
      }
      if (env.kind !== "game" && env.game !== undefined) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "game"], message: "only game environments take game settings" });
      }
      if (env.kind !== "remote" && env.url !== undefined) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "url"], message: "only remote environments take a url" });
      }
      if (env.kind !== "remote" && env.remote !== undefined) {
        ctx.addIssue({ code: "custom", path: ["environments", i, "remote"], message: "only remote environments take remote settings" });
      }
      if (env.kind === "game") {
        const opponent = env.game?.opponent ?? "random";
        // The seats are the roles when the environment maps them (`roles: {X: policy, O: policy}`: self-play).
        const byRole = env.roles !== undefined;
        const seats = byRole ? Object.keys(env.roles ?? {}).length : env.actors.length;
        const seatPath = ["environments", i, byRole ? "roles" : "actors"];
        if (opponent === "random" && seats !== 1) {
          ctx.addIssue({ code: "custom", path: seatPath, message: `a game against the random player has exactly one ${byRole ? "role" : "actor"}` });
        }
        if (opponent === "actors" && seats !== 2) {
          ctx.addIssue({ code: "custom", path: seatPath, message: `a game between actors has exactly two ${byRole ? "roles " : ""}(the first plays X and moves first)` });
        }
        // Against the random player a role named after a mark plays it (the random player sits in the other seat).
        const onlyRole = byRole && opponent === "random" && seats === 1 ? Object.keys(env.roles ?? {})[0] : undefined;
        const side = onlyRole === "X" ? "first" : onlyRole === "O" ? "second" : undefined;
        if (side !== undefined && (env.game?.actorPlays ?? "first") !== side) {
          ctx.addIssue({ code: "custom", path: seatPath, message: `the role "${onlyRole}" plays ${onlyRole}: against the random player it needs actorPlays "${side}" (the random player sits in the other mark's seat)` });
        }
        if (opponent === "actors" && (env.game?.actorPlays ?? "first") !== "first") {
          ctx.addIssue({ code: "custom", path: ["environments", i, "game", "actorPlays"], message: 'only for opponent "random": between actors the first actor plays X' });
        }
        for (const field of ["moveFormat", "cutoff"] as const) {
          if (env.game?.[field] !== undefined && env.game.name !== "chess") {
            ctx.addIssue({ code: "custom", path: ["environments", i, "game", field], message: `only chess takes ${field}` });
          }
        }
      }
    });
    for (const issue of runIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of evalIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of learnerIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of ppoIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of outcomeIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of teamIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of roleIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of coryIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of hierarchicalIssues(spec)) ctx.addIssue({ code: "custom", ...issue });
    if (!spec.actors.some((a) => a.trainable) && spec.trainer.steps > 0) {
      ctx.addIssue({ code: "custom", path: ["actors"], message: "at least one actor must be trainable" });
    }
  });

/** A RunSpec as written by a person or a client (defaults may be omitted). */
export type RunSpecInput = z.input<typeof RunSpec>;
/** A RunSpec with every default filled in: what is frozen on a Run row. */
export type RunSpec = z.output<typeof RunSpec>;
export type ActorSpec = z.output<typeof ActorSpec>;
export type EnvironmentSpec = z.output<typeof EnvironmentSpec>;
