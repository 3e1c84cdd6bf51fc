/**
 * Seeds (once) a long run for the web benchmarks: SERIES metric series × POINTS steps, generated in
 * SQL (generate_series), plus memory samples and BENCH_EPISODES transcripts. Re-running finds the
 * seeded run by name and reuses it.
 */
import type { Db } from "@troupe/db";

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

export async function seedBenchRun(db: Db, points: number): Promise<{ runId: string; seeded: boolean }> {
  const name = BENCH_RUN_NAME(points);
  const existing = await db.run.findFirst({ where: { name, status: "succeeded" }, select: { id: true } });
  if (existing) return { runId: existing.id, seeded: await seedBenchEpisodes(db, existing.id, points) };
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
  await db.$executeRawUnsafe(
    `INSERT INTO "MemorySample" ("runId", seq, step, phase, device, actor, "rssBytes", ts)
     SELECT $1, g, g / 3 + 1, (ARRAY['rollout','reference','update'])[g % 3 + 1], 'cpu', 'alice', 1e9 + g * 10, now()
     FROM generate_series(1, $2::int) g`,
    run.id, Math.min(points, 300_000),
  );
  await db.$executeRawUnsafe(`ANALYZE "MetricPoint"`);
  await seedBenchEpisodes(db, run.id, points);
  await db.run.update({ where: { id: run.id }, data: { status: "succeeded" } });
  return { runId: run.id, seeded: true };
}
