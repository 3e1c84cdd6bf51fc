import type { Db } from "../../../server/db";
import { buildTimeline, type GpuTimeline, type TimelineMove, type TimelineSample } from "../lib/residencyTimeline";

/**
 * The GPU timeline of a window of steps: the run's memory readings (MemorySample, indexed by step) and
 * its offload moves (RunEvent), plus each actor's last move before the window (its state at the start).
 */

/** Steps shown when no window is asked for: the last ones. */
export const DEFAULT_TIMELINE_STEPS = 8;
export const MAX_TIMELINE_STEPS = 50;

export async function loadGpuTimeline(db: Db, runId: string, window: { fromStep?: number; toStep?: number }): Promise<GpuTimeline> {
  const last = await db.memorySample.findFirst({ where: { runId }, orderBy: { step: "desc" }, select: { step: true } });
  if (!last) return { steps: [], actors: [], devices: [], lastStep: null };
  const toStep = Math.min(window.toStep ?? last.step, last.step);
  const fromStep = Math.max(window.fromStep ?? toStep - DEFAULT_TIMELINE_STEPS + 1, toStep - MAX_TIMELINE_STEPS + 1, 0);
  const [samples, moves, before] = await Promise.all([
    db.memorySample.findMany({
      where: { runId, step: { gte: fromStep, lte: toStep } },
      orderBy: { seq: "asc" },
      select: { seq: true, step: true, phase: true, device: true, actor: true },
    }),
    db.$queryRaw<Record<string, unknown>[]>`
      SELECT seq, payload FROM "RunEvent"
      WHERE "runId" = ${runId} AND type = 'offload' AND (payload->>'step')::int BETWEEN ${fromStep} AND ${toStep}
      ORDER BY seq`,
    db.$queryRaw<{ actor: string; direction: string }[]>`
      SELECT DISTINCT ON (payload->>'actor') payload->>'actor' AS actor, payload->>'direction' AS direction FROM "RunEvent"
      WHERE "runId" = ${runId} AND type = 'offload' AND (payload->>'step')::int < ${fromStep}
      ORDER BY payload->>'actor', seq DESC`,
  ]);
  const timelineSamples: TimelineSample[] = samples.map((s) => ({ ...s, actor: s.actor === "" ? null : s.actor }));
  const timelineMoves: TimelineMove[] = moves.map((r) => {
    const p = r.payload as Record<string, unknown>;
    return {
      seq: Number(r.seq),
      step: Number(p.step),
      actor: String(p.actor),
      direction: p.direction === "reload" ? "reload" : "offload",
      parts: Array.isArray(p.parts) ? p.parts.map(String) : null,
      phase: typeof p.phase === "string" ? p.phase : null,
      bytes: Number(p.bytes ?? 0),
      seconds: Number(p.seconds ?? 0),
    };
  });
  const residentBefore = Object.fromEntries(before.map((b) => [b.actor, b.direction === "reload"]));
  return { ...buildTimeline(timelineSamples, timelineMoves, residentBefore), lastStep: last.step };
}
