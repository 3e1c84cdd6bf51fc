import { fieldIssues, QUEUES, RewardSpec, RewardTestResult, type RewardTestJob } from "@troupe/contracts";
import { TRPCError } from "@trpc/server";
import { badRequest } from "../../../server/api/trpc";
import type { RewardTestClient } from "../../../server/redis";
import type { RewardTestInput, RewardTestOutput } from "./rewardTestSchemas";

/**
 * The designer's Test button. The web app never runs Python: it puts a typed `rewardTests` job on
 * its own queue, a runner runs the code in the runtime's out-of-process reward worker, and this
 * request waits for the job's result (or says plainly that no runner answered).
 */

/** The keyword arguments of each call, exactly as a run would pass them (see python_rewards.py). */
export function buildCalls(input: Pick<RewardTestInput, "samples" | "promptField" | "actorName">, scope: "completion" | "conversation") {
  return input.samples.map(({ row, completion }) => {
    const prompt = String(row[input.promptField] ?? "");
    // Named arguments win over row columns of the same name, as in training.
    return scope === "conversation"
      ? {
          ...row,
          conversation: [
            { actor: "user", content: prompt },
            { actor: input.actorName, content: completion },
          ],
          actor_name: input.actorName,
        }
      : { ...row, prompt, completion };
  });
}

export async function testReward(client: RewardTestClient, input: RewardTestInput): Promise<RewardTestOutput> {
  const parsed = RewardSpec.safeParse(input.reward);
  if (!parsed.success) {
    throw badRequest(
      fieldIssues(parsed.error).map((i) => ({ ...i, path: i.path === "(root)" ? "reward" : `reward.${i.path}` })),
      "invalid reward",
    );
  }
  const reward = parsed.data;
  const calls = buildCalls(input, reward.scope);
  const payload: RewardTestJob = QUEUES.rewardTests.jobs.test.parse({ reward, calls });

  if ((await client.queue.getWorkersCount()) === 0) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: "No runner is connected, so the reward cannot be run (the web app never runs Python itself). Start one: npm run -w @troupe/runner start",
    });
  }
  const started = Date.now();
  const job = await client.queue.add("test", payload, { removeOnComplete: { age: 600 }, removeOnFail: { age: 3600 } });
  let raw: unknown;
  try {
    raw = await job.waitUntilFinished(client.events, input.waitSeconds * 1000);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/timed out/i.test(message)) {
      // Nobody took it in time: take it back so a runner that starts later does not run a stale test.
      await job.remove().catch(() => {});
      throw new TRPCError({
        code: "TIMEOUT",
        message: `No runner finished the test within ${input.waitSeconds} s (runners busy or stopped?). Try again, or check the runner's log.`,
      });
    }
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: `the runner could not run the test: ${message}` });
  }
  const result = RewardTestResult.parse(raw);
  return {
    results: result.results.map((r, index) => ({
      index,
      score: "score" in r ? r.score : null,
      error: "error" in r ? r.error : null,
      seconds: r.seconds,
    })),
    seconds: result.seconds,
    roundTripSeconds: (Date.now() - started) / 1000,
    runnerId: result.runnerId,
    calls,
  };
}
