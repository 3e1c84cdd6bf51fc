import { QUEUES } from "@troupe/contracts";
import { memoryLog, startRewardTestWorker } from "@troupe/runner";
import { TRPCError } from "@trpc/server";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../src/server/api/root";
import type { RewardTestClient } from "../src/server/redis";
import { openServices, serviceUrls, uniqueId, type TestServices } from "./helpers/services";

/**
 * The Test button end to end below the browser: tRPC procedure → BullMQ (real Redis) → the runner's
 * reward-test worker (real runner code) → `python -m troupe.reward_test` (real Python, the runtime's
 * out-of-process reward worker) → result back to the waiting request.
 */

const PYTHON = new URL("../../../.venv/bin/python", import.meta.url).pathname;

let services: TestServices;
let client: RewardTestClient;
let prefix: string;
let runnerWorker: ReturnType<typeof startRewardTestWorker> | null = null;

function callerWith(rewardTests: RewardTestClient) {
  return createCaller({ ...services.ctx, rewardTests });
}

beforeAll(async () => {
  services = openServices();
  const { redisUrl } = serviceUrls();
  prefix = uniqueId("troupe-reward-test");
  const connection = () => new Redis(redisUrl, { maxRetriesPerRequest: null });
  client = {
    queue: new Queue(QUEUES.rewardTests.name, { connection: connection(), prefix }),
    events: new QueueEvents(QUEUES.rewardTests.name, { connection: connection(), prefix }),
  };
  await client.events.waitUntilReady();
});

afterAll(async () => {
  await runnerWorker?.close();
  await client.queue.obliterate({ force: true }).catch(() => {});
  await client.queue.close();
  await client.events.close();
  await services.close();
});

const code = (body: string) => ({ name: "correct", source: { kind: "python", code: body } });
const GOOD = 'def reward(prompt, completion, answer, **row):\n    return 1.0 if completion.strip() == answer else 0.0\n';
const BUGGY = 'def reward(prompt, completion, answer, **row):\n    return 1.0 if completion.strip() == answr else 0.0\n';
const rows = [
  { prompt: "say a:", answer: "a" },
  { prompt: "say b:", answer: "b" },
];

describe("reward.test through a runner", () => {
  it("says plainly that no runner is connected, without waiting", async () => {
    const started = Date.now();
    const error = await callerWith(client)
      .reward.test({ reward: code(GOOD), samples: [{ row: rows[0]!, completion: "a" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("PRECONDITION_FAILED");
    expect((error as TRPCError).message).toMatch(/No runner is connected/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("scores each sample, with times, and returns a bug's traceback", async () => {
    const log = memoryLog();
    runnerWorker = startRewardTestWorker({ redisUrl: serviceUrls().redisUrl, python: PYTHON, runnerId: "test-runner" }, log, { queuePrefix: prefix });
    await runnerWorker.worker.waitUntilReady();
    const caller = callerWith(client);

    const good = await caller.reward.test({
      reward: code(GOOD),
      samples: [
        { row: rows[0]!, completion: "a" },
        { row: rows[1]!, completion: "a" },
      ],
    });
    expect(good.results.map((r) => [r.score, r.error])).toEqual([
      [1, null],
      [0, null],
    ]);
    expect(good.runnerId).toBe("test-runner");
    expect(good.seconds).toBeGreaterThan(0);
    expect(good.results.every((r) => r.seconds >= 0)).toBe(true);
    // The function saw the row's columns plus prompt and completion.
    expect(good.calls[0]).toEqual({ prompt: "say a:", answer: "a", completion: "a" });

    const buggy = await caller.reward.test({ reward: code(BUGGY), samples: [{ row: rows[0]!, completion: "a" }] });
    expect(buggy.results[0]!.score).toBeNull();
    expect(buggy.results[0]!.error).toContain("NameError: name 'answr' is not defined");
    expect(buggy.results[0]!.error).toContain('File "<reward code>", line 2, in reward');
    expect(log.lines.some((l) => l.includes('reward test') && l.includes('"correct"'))).toBe(true);
  });

  it("passes conversation and actor_name to a conversation-scope reward", async () => {
    const reward = {
      name: "talk",
      scope: "conversation",
      source: { kind: "python", code: "def reward(conversation, actor_name, **row):\n    return float(len(conversation)) + (0.5 if actor_name == 'Bob' else 0)\n" },
    };
    const out = await callerWith(client).reward.test({ reward, actorName: "Bob", samples: [{ row: rows[0]!, completion: "hi" }] });
    expect(out.results[0]!.score).toBe(2.5);
  });

  it("refuses an invalid reward spec with the field path before anything is queued", async () => {
    const error = await callerWith(client)
      .reward.test({ reward: { name: "x", source: { kind: "python", code: "" } }, samples: [{ row: {}, completion: "" }] })
      .catch((e: unknown) => e as TRPCError);
    expect((error as TRPCError).code).toBe("BAD_REQUEST");
    expect((error as TRPCError).message).toContain("reward.source.code");
  });
});
