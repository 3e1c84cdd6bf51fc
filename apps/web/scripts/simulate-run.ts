/**
 * Dev tool: plays a made-up run into the database and its Redis stream, the way a runner would,
 * so the run page can be looked at (and its live charts watched) without the Python runtime.
 *
 *   DATABASE_URL=… REDIS_URL=… npx tsx apps/web/scripts/simulate-run.ts [--steps 40] [--interval-ms 250] [--fail] [--experiment ID] [--offload] [--ratings]
 *
 * Prints the run id first, then plays one step per interval. `--offload`: two actors, alice and bob,
 * take turns on cuda:0 with between-phase offload: each step reloads one before its update and
 * offloads it after (an `offload` event per move, with bytes and seconds), as the residency manager does.
 * `--ratings`: two players, alice and bob, report win/draw/loss each step and an Elo every 4 steps (a checkpoint),
 * as gpu-runtime troupe/ratings does: `elo/rating`, `elo/ci95`, `elo/games` per actor, `elo/opponent/<name>`.
 */
import { parseArgs } from "node:util";
import { DEMO_SPEC, runEventStreamKey, type RunEvent, type StatusEvent } from "@troupe/contracts";
import { appendToStream, createDb, expireStream, storeEvents, transitionRun } from "@troupe/db";
import { Redis } from "ioredis";
import { parseServerEnv } from "../src/env";

const { values } = parseArgs({
  options: {
    steps: { type: "string", default: "40" },
    "interval-ms": { type: "string", default: "250" },
    fail: { type: "boolean", default: false },
    experiment: { type: "string" },
    offload: { type: "boolean", default: false },
    ratings: { type: "boolean", default: false },
  },
});
const steps = Number(values.steps);
const intervalMs = Number(values["interval-ms"]);

const env = parseServerEnv(process.env);
const db = createDb(env.DATABASE_URL);
const redis = new Redis(env.REDIS_URL);

const spec = { ...DEMO_SPEC, trainer: { ...DEMO_SPEC.trainer, steps } };
const queued: StatusEvent = { seq: 1, ts: Date.now(), type: "status", state: "queued", message: "simulated" };
const run = await db.run.create({
  data: {
    experimentId: values.experiment ?? (await db.experiment.findFirst({ where: { isDemo: true }, select: { id: true } }))?.id ?? null,
    name: `${spec.name} (simulated)`,
    spec,
    specVersion: spec.specVersion,
    seed: spec.seed,
    source: "seed",
    tags: ["simulated"],
    lastSeq: 1,
    events: { create: [{ seq: 1, type: "status", ts: new Date(queued.ts), payload: queued }] },
  },
});
console.log(run.id);
await appendToStream(redis, run.id, [queued]);

/**
 * One step of two actors sharing cuda:0: for each actor in turn, a reload of its parameters and optimizer
 * state before its update, the update's device memory, and an offload after it. Sizes are a 0.5B and a
 * 1.5B model's fp32 params + Adam state (bytes = what moved; the seconds a ~12 GB/s pinned copy takes).
 */
function turnsOnOneDevice(step: number, ts: number, nextSeq: () => number): RunEvent[] {
  const out: RunEvent[] = [];
  const GiB = 2 ** 30;
  for (const [actor, bytes] of [
    ["alice", 6 * GiB],
    ["bob", 18 * GiB],
  ] as const) {
    const seconds = Number((bytes / 12e9 + rand() * 0.05).toFixed(4));
    const parts: ("params" | "optimizer")[] = ["params", "optimizer"];
    out.push({ seq: nextSeq(), ts, type: "offload", step, actor, direction: "reload", parts, phase: "update", bytes, seconds });
    out.push({ seq: nextSeq(), ts, type: "memory", step, phase: "update", device: "cuda:0", actor, allocatedBytes: bytes + 2 * GiB + Math.round(rand() * 0.2 * GiB), peakBytes: bytes + 5 * GiB });
    out.push({ seq: nextSeq(), ts, type: "offload", step, actor, direction: "offload", parts, phase: "update", bytes, seconds: Number((seconds * 0.9).toFixed(4)) });
  }
  out.push({ seq: nextSeq(), ts, type: "memory", step, phase: "rollout", device: "cuda:0", allocatedBytes: Math.round(3 * GiB + rand() * 0.3 * GiB), peakBytes: 4 * GiB });
  return out;
}

/**
 * Two players learning a game: outcome rates every step, and at each checkpoint (every 4 steps) their Elo, rising
 * from below the random player's 1000 (an untrained model forfeits) with an interval that narrows as games add up.
 */
function gameEvents(step: number, ts: number, nextSeq: () => number): RunEvent[] {
  const out: RunEvent[] = [];
  const progress = step / steps;
  for (const [actor, skill] of [
    ["alice", 1],
    ["bob", 0.6],
  ] as const) {
    const win = Math.min(0.9, 0.05 + 0.7 * skill * progress);
    out.push({ seq: nextSeq(), ts, type: "metric", step, actor, values: { "game/win": win, "game/draw": 0.1, "game/loss": 0.9 - win, "game/forfeit": Math.max(0, 0.6 - progress) } });
    if (step % 4 === 0) {
      const games = 24 * (step / 4);
      const rating = Math.round(700 + 650 * skill * progress);
      out.push({ seq: nextSeq(), ts, type: "metric", step, actor, values: { "elo/rating": rating, "elo/ci95": Math.round(600 / Math.sqrt(games / 8)), "elo/games": games } });
    }
  }
  if (step % 4 === 0) out.push({ seq: nextSeq(), ts, type: "metric", step, values: { "elo/opponent/random": 1000, "elo/opponent/first_move": 1120 } });
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running = await transitionRun(db, run.id, { from: ["queued"], to: "running", extra: { startedAt: new Date(), runnerId: "simulator" } });
if (running) await appendToStream(redis, run.id, [running]);

let seq = (running?.seq ?? 1) + 1;
let lineNo = 0;
const letters = "abcdefghij";

/** GRPO's advantages: (reward − group mean) / (group std + ε), the std with Bessel's correction. */
function groupAdvantages(rewards: number[]): number[] {
  const mean = rewards.reduce((a, r) => a + r, 0) / rewards.length;
  const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / Math.max(1, rewards.length - 1));
  return rewards.map((r) => (r - mean) / (std + 1e-4));
}
// A reproducible pseudo-random walk, so two simulations look alike.
let state = 7;
const rand = () => ((state = (state * 48271) % 2147483647) / 2147483647);

for (let step = 1; step <= steps; step++) {
  const progress = step / steps;
  const mean = Math.min(1, 0.12 + 0.8 * progress * progress + (rand() - 0.5) * 0.08);
  const now = Date.now();
  const events: RunEvent[] = [
    { seq: seq++, ts: now, type: "memory", step, phase: "rollout", device: "cpu", rssBytes: 700e6 + step * 1.5e6 + rand() * 20e6 },
    { seq: seq++, ts: now, type: "memory", step, phase: "reward", device: "cpu", rssBytes: 690e6 + step * 1.5e6 + rand() * 5e6 },
    { seq: seq++, ts: now, type: "memory", step, phase: "update", device: "cpu", rssBytes: 880e6 + step * 1.6e6 + rand() * 30e6 },
    {
      seq: seq++,
      ts: now,
      type: "metric",
      step,
      actor: "student",
      values: { "reward/mean": mean, "reward/std": 0.25 * (1 - progress) + 0.05, loss: 1.8 * Math.exp(-3 * progress) + rand() * 0.1, kl: 0.01 * progress },
    },
  ];
  if (values.offload) events.push(...turnsOnOneDevice(step, now, () => seq++));
  if (values.ratings) events.push(...gameEvents(step, now, () => seq++));
  // Whole GRPO groups, as the runtime records them: group 0 is one prompt sampled twice, its advantages
  // the rewards normalised within the group.
  const letter = letters[step % letters.length]!;
  const rewards = [0, 1].map(() => Math.round(8 * Math.min(1, mean + (rand() - 0.5) * 0.2)) / 8);
  // One group's episodes: a prompt, then each sample's one answer, advantages normalised within the group.
  const pushGroup = (group: number, datasetRow: number, prompt: string, answers: { actor: string; content: string; reward: number }[]) => {
    const advantages = groupAdvantages(answers.map((a) => a.reward));
    answers.forEach((answer, sample) => {
      events.push({
        seq: seq++,
        ts: now,
        type: "episode",
        step,
        environment: "echo",
        group,
        sample,
        datasetRow,
        messages: [
          { actor: "letters", role: "user", content: prompt, trained: false },
          { actor: answer.actor, role: "assistant", content: answer.content, trained: answer.actor === "student" },
        ],
        reward: answer.reward,
        rewardComponents: { letter_match: answer.reward },
        advantage: advantages[sample]!,
      });
    });
  };
  pushGroup(
    0,
    (step * 3) % 256,
    `say ${letter}:`,
    rewards.map((reward) => {
      const good = Math.round(reward * 8);
      return { actor: "student", content: letter.repeat(good) + "<script>alert(1)</script>".slice(0, 8 - good), reward };
    }),
  );
  if (step === 1) {
    // A second actor, and model output that is HTML: the page must show it as text, never run it. Its
    // group's other sample is the student's, so the judge speaks in one episode only.
    pushGroup(1, 7, "say <b>bold</b>:", [
      { actor: "judge", content: '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 1">', reward: 0 },
      { actor: "student", content: "b", reward: 1 },
    ]);
    // A group that all scored 1: mean 1, std 0, so every advantage is 0.
    pushGroup(2, 9, "say a:", [
      { actor: "student", content: "aaaaaaaa", reward: 1 },
      { actor: "student", content: "aaaaaaaa", reward: 1 },
    ]);
  }
  await storeEvents(db, run.id, events);
  await appendToStream(redis, run.id, events);
  await db.logLine.create({
    data: { runId: run.id, lineNo: ++lineNo, stream: "stdout", text: `step ${step}/${steps} reward=${mean.toFixed(3)}`, ts: new Date() },
  });
  if (step % 10 === 0) {
    await db.logLine.create({ data: { runId: run.id, lineNo: ++lineNo, stream: "stderr", text: `warning: simulated warning at step ${step}`, ts: new Date() } });
  }
  await db.run.update({ where: { id: run.id }, data: { heartbeatAt: new Date() } });
  await sleep(intervalMs);
}

const logTail = (await db.logLine.findMany({ where: { runId: run.id }, orderBy: { lineNo: "desc" }, take: 20 }))
  .reverse()
  .map((l) => l.text)
  .join("\n");
const end = values.fail
  ? await transitionRun(db, run.id, {
      from: ["running"],
      to: "failed",
      message: "RuntimeError: simulated failure",
      error: "RuntimeError: simulated failure after the last step (exit code 1)",
      logTail,
    })
  : await transitionRun(db, run.id, { from: ["running"], to: "succeeded", message: "done" });
if (end) await appendToStream(redis, run.id, [end]);
await expireStream(redis, run.id);
console.error(`run ${run.id} ${end?.state ?? "?"}; stream ${runEventStreamKey(run.id)}`);
await redis.quit();
await db.$disconnect();
