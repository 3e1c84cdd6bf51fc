/**
 * Seeds (once) a long run for the web benchmarks: SERIES metric series × POINTS steps, generated in
 * SQL (generate_series), plus BENCH_MEMORY_SAMPLES memory samples and BENCH_EPISODES transcripts.
 * Re-running finds the seeded run by name and reuses it.
 */
import { parseArgs } from "node:util";
import { createDb, type Db } from "@troupe/db";

export const BENCH_SERIES = 20;
export const BENCH_RUN_NAME = (points: number) => `bench: ${BENCH_SERIES} series x ${points} points`;

/** The 20 series names of the runtime, split over two actors. */
export function benchSeries(): { name: string; actor: string }[] {
  const names = ["reward/mean", "reward/std", "reward/match", "advantage/mean", "loss", "kl", "clip_frac", "entropy", "grad_norm", "lr"];
  return ["alice", "bob"].flatMap((actor) => names.map((name) => ({ name, actor })));
}

export const BENCH_EPISODES = 100_000;

/**
 * BENCH_EPISODES transcripts on the run's last steps (4 GRPO groups × 2 samples per step, two actors
 * taking turns, a dataset row reused every 500 steps), unless the run has them already. One in 1,000
 * carries HTML, as model output can.
 */
export async function seedBenchEpisodes(db: Db, runId: string, lastStep: number): Promise<boolean> {
  // A short run (the page benchmark's baseline) gets 8 per step.
  const count = Math.min(BENCH_EPISODES, lastStep * 8);
  if ((await db.episode.count({ where: { runId } })) >= count) return false;
  await db.episode.deleteMany({ where: { runId } });
  await db.$executeRawUnsafe(
    `INSERT INTO "Episode" ("runId", seq, step, environment, "groupIndex", "sampleIndex", "datasetRow", messages, reward, "rewardComponents", advantage, ts)
     SELECT $1, 10000000 + g, s.step, 'debate', ((g - 1) % 8) / 2, (g - 1) % 2, s.step % 500,
       jsonb_build_array(
         jsonb_build_object('actor', 'alice', 'role', 'user', 'content', 'Problem ' || (s.step % 500) || ': what is ' || (s.step % 97) || ' + ' || (s.step % 13) || '?', 'trained', false),
         jsonb_build_object('actor', 'alice', 'role', 'assistant', 'content', CASE WHEN g % 1000 = 0 THEN '<script>window.__xss = 1</script>' ELSE repeat('Let me think step by step. ', 1 + g % 6) END || ((s.step % 97) + (s.step % 13)), 'trained', true),
         jsonb_build_object('actor', 'bob', 'role', 'assistant', 'content', 'I disagree: the answer is ' || ((s.step % 97) + (s.step % 13) + (g % 3) - 1) || '.', 'trained', true)),
       (g % 3) / 2.0, jsonb_build_object('correct', (g % 3) / 2.0, 'format', 1), (g % 3) / 2.0 - 0.5,
       timestamp '2025-01-01' + s.step * interval '1 second'
     FROM generate_series(1, $2::int) g, LATERAL (SELECT $3::int - (g - 1) / 8 AS step) s`,
    runId, count, lastStep,
  );
  await db.$executeRawUnsafe(`ANALYZE "Episode"`);
  return true;
}

export const BENCH_MEMORY_SAMPLES = 300_000;

/** The memory series of a bench run: per sampled step one sample of each (8 series on 2 devices). */
export const BENCH_MEMORY_SERIES = [
  { phase: "rollout", device: "cuda:0", actor: "alice", gib: 30 },
  { phase: "reference", device: "cuda:0", actor: "alice", gib: 34 },
  { phase: "update", device: "cuda:0", actor: "alice", gib: 38 },
  { phase: "rollout", device: "cuda:0", actor: "bob", gib: 24 },
  { phase: "update", device: "cuda:0", actor: "bob", gib: 28 },
  { phase: "weight_sync", device: "cuda:0", actor: "bob", gib: 26 },
  { phase: "rollout", device: "cpu", actor: "", gib: 12 },
  { phase: "update", device: "cpu", actor: "", gib: 16 },
] as const;

/**
 * Memory samples over the whole run (min(points, 300,000): every 26th step of a 1M-step run), as the
 * runtime reports them: host RSS on `cpu`, allocated / reserved / peak on `cuda:0`, per phase and actor,
 * with one ~80 GiB spike in alice's update at 60% of the run (the OOM the peaks table must trace).
 * Re-seeds a run whose memory has another shape (older seeds had one host series only).
 */
export async function seedBenchMemory(db: Db, runId: string, points: number): Promise<boolean> {
  const samples = Math.min(points, BENCH_MEMORY_SAMPLES);
  const perStep = BENCH_MEMORY_SERIES.length;
  const steps = Math.floor(samples / perStep);
  const stride = Math.max(1, Math.floor(points / steps));
  if ((await db.memorySample.count({ where: { runId, device: "cuda:0" } })) === steps * 6) return false;
  await db.memorySample.deleteMany({ where: { runId } });
  await db.memoryRollup.deleteMany({ where: { runId } });
  const k = BENCH_MEMORY_SERIES;
  await db.$executeRawUnsafe(
    `INSERT INTO "MemorySample" ("runId", seq, step, phase, device, actor, "rssBytes", "allocatedBytes", "reservedBytes", "peakBytes", ts)
     SELECT $1, g + 1, s.step, k.phase, k.device, k.actor,
       CASE WHEN k.device = 'cpu' THEN s.gib END,
       CASE WHEN k.device <> 'cpu' THEN s.gib END,
       CASE WHEN k.device <> 'cpu' THEN s.gib + 4 * 2^30 END,
       CASE WHEN k.device <> 'cpu' THEN s.gib + 2 * 2^30 + CASE WHEN k.i = 2 AND s.step = $4::int THEN 39 * 2^30 ELSE 0 END END,
       timestamp '2025-01-01' + s.step * interval '1 second'
     FROM generate_series(0, $2::int - 1) g
     JOIN (VALUES ${k.map((x, i) => `(${i}, '${x.phase}', '${x.device}', '${x.actor}', ${x.gib})`).join(", ")}) AS k(i, phase, device, actor, gib)
       ON k.i = g % ${perStep}
     CROSS JOIN LATERAL (
       SELECT 1 + (g / ${perStep}) * $3::int AS step,
              ((k.gib + sin(g / ${perStep} / 500.0 + k.i)) * 2^30 + (g % 101) * 2^20)::bigint AS gib) s`,
    runId, steps * perStep, stride, 1 + Math.floor(steps * 0.6) * stride,
  );
  await db.$executeRawUnsafe(`ANALYZE "MemorySample"`);
  await db.$executeRawUnsafe(`ANALYZE "MemoryRollup"`);
  return true;
}

export async function seedBenchRun(db: Db, points: number): Promise<{ runId: string; seeded: boolean }> {
  const name = BENCH_RUN_NAME(points);
  const existing = await db.run.findFirst({ where: { name, status: "succeeded" }, select: { id: true } });
  if (existing) {
    const memory = await seedBenchMemory(db, existing.id, points);
    const episodes = await seedBenchEpisodes(db, existing.id, points);
    return { runId: existing.id, seeded: memory || episodes };
  }
  await db.run.deleteMany({ where: { name } });
  const run = await db.run.create({
    data: { name, spec: {}, specVersion: 1, seed: 0, status: "running", source: "seed", tags: ["bench"], lastStep: points },
    select: { id: true },
  });
  const t0 = Date.now();
  for (const [i, s] of benchSeries().entries()) {
    // A noisy wave with a rare spike (every 99,991 steps), so min/max bands have something to keep.
    await db.$executeRawUnsafe(
      `INSERT INTO "MetricPoint" ("runId", name, actor, step, value, ts)
       SELECT $1, $2, $3, g, sin(g / 5000.0 + $4) + (g % 97) / 970.0 + CASE WHEN g % 99991 = 0 THEN 50 ELSE 0 END,
              timestamp '2025-01-01' + g * interval '1 second'
       FROM generate_series(1, $5::int) g`,
      run.id, s.name, s.actor, i, points,
    );
    process.stderr.write(`seeded ${s.actor}/${s.name} (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
  }
  await db.$executeRawUnsafe(`ANALYZE "MetricPoint"`);
  await seedBenchMemory(db, run.id, points);
  await seedBenchEpisodes(db, run.id, points);
  await db.run.update({ where: { id: run.id }, data: { status: "succeeded" } });
  return { runId: run.id, seeded: true };
}

/**
 * A database benchmark's start: `--points` and `--repeats` from the command line, the database in
 * DATABASE_URL, and the long run seeded (or reused), said on stdout.
 */
export async function openBenchRun(defaultRepeats: number): Promise<{ db: Db; points: number; repeats: number; runId: string }> {
  const { values } = parseArgs({ options: { points: { type: "string", default: "1000000" }, repeats: { type: "string", default: String(defaultRepeats) } } });
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set");
  const db = createDb(url);
  const points = Number(values.points);
  const t0 = Date.now();
  const { runId, seeded } = await seedBenchRun(db, points);
  console.log(`run ${runId}: ${seeded ? `seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s` : "reused"}`);
  return { db, points, repeats: Number(values.repeats), runId };
}
