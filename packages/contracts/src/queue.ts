import { z } from "zod";

/**
 * The typed job catalog on top of BullMQ (one place for queue names and payloads).
 * Producers (web) and consumers (runner) both import it, so a payload change is a type error
 * on both sides.
 */
export const QUEUES = {
  runs: {
    name: "troupe-runs",
    jobs: {
      /** Train or evaluate one run. The job id is the run id, so enqueueing twice is a no-op. */
      run: z.object({ runId: z.string().min(1), gpus: z.number().int().min(0).default(0) }).strict(),
    },
  },
} as const;

export type RunJob = z.infer<typeof QUEUES.runs.jobs.run>;

/** Redis pub/sub channel on which the web asks runners to act on a running run. */
export const RUN_CONTROL_CHANNEL = "troupe:run-control";
export const RunControlMessage = z
  .object({ runId: z.string().min(1), action: z.enum(["cancel"]) })
  .strict();
export type RunControlMessage = z.infer<typeof RunControlMessage>;
