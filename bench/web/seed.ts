/**
 * Seeds (once) a long run for the web benchmarks: SERIES metric series × POINTS steps, generated in
 * SQL (generate_series), plus memory samples. Re-running finds the seeded run by name and reuses it.
 */
import type { Db } from "@troupe/db";

export const BENCH_SERIES = 20;
export const BENCH_RUN_NAME = (points: number) => `bench: ${BENCH_SERIES} series x ${points} points`;

/** The 20 series names of the runtime, split over two actors. */
export function benchSeries(): { name: string; actor: string }[] {
  const names = ["reward/mean", "reward/std", "reward/match", "advantage/mean", "loss", "kl", "clip_frac", "entropy", "grad_norm", "lr"];
  return ["alice", "bob"].flatMap((actor) => names.map((name) => ({ name, actor })));
}

export async function seedBenchRun(db: Db, points: number): Promise<{ runId: string; seeded: boolean }> {
  const name = BENCH_RUN_NAME(points);
  const existing = await db.run.findFirst({ where: { name, status: "succeeded" }, select: { id: true } });
  if (existing) return { runId: existing.id, seeded: false };
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
  await db.run.update({ where: { id: run.id }, data: { status: "succeeded" } });
  return { runId: run.id, seeded: true };
}
