import { z } from "zod";

/** Most calls one Test may make: enough to see a pattern, few enough to answer in seconds. */
export const MAX_TEST_SAMPLES = 20;

export const RewardTestSample = z
  .object({
    /** The dataset row (its columns become keyword arguments). */
    row: z.record(z.string(), z.unknown()),
    /** The completion to score, as the user typed it. */
    completion: z.string().max(100_000),
  })
  .strict();

export const RewardTestInput = z
  .object({
    /** A RewardSpec as written (validated by the contracts schema; errors carry `reward.<path>`). */
    reward: z.record(z.string(), z.unknown()),
    samples: z.array(RewardTestSample).min(1, "add at least one sample").max(MAX_TEST_SAMPLES),
    /** Column holding the prompt (environment `prompt.field`). */
    promptField: z.string().min(1).default("prompt"),
    /** conversation scope: the actor whose reply `completion` is. */
    actorName: z.string().min(1).default("assistant"),
    /** How long to wait for a runner, in seconds. */
    waitSeconds: z.number().min(1).max(300).default(60),
  })
  .strict();
export type RewardTestInput = z.output<typeof RewardTestInput>;

export const RewardTestCallOut = z.object({
  index: z.number().int(),
  score: z.number().nullable(),
  /** The Python traceback when the call failed. */
  error: z.string().nullable(),
  seconds: z.number(),
});

export const RewardTestOutput = z.object({
  results: z.array(RewardTestCallOut),
  /** Wall time on the runner, worker start-up included. */
  seconds: z.number(),
  /** Wall time of the whole request (queue wait included). */
  roundTripSeconds: z.number(),
  runnerId: z.string(),
  /** The keyword arguments each call received (what the function saw), in order. */
  calls: z.array(z.record(z.string(), z.unknown())),
});
export type RewardTestOutput = z.infer<typeof RewardTestOutput>;
