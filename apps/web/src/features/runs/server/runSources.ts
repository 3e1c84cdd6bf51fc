import type { FieldIssue, RunSpec } from "@troupe/contracts";
import { badRequest } from "../../../server/api/trpc";
import type { Db } from "../../../server/db";
import { checkpointsFromEvents } from "./checkpointList";

/** Actors that start from another run's checkpoint (`model: {source: "run", runId, step, actor?}`). */
export function runSourcesOf(spec: RunSpec): { index: number; actor: string; runId: string; step: number; fromActor: string; named: boolean }[] {
  return spec.actors.flatMap((a, index) =>
    a.model.source === "run"
      ? [{ index, actor: a.name, runId: a.model.runId, step: a.model.step, fromActor: a.model.actor ?? a.name, named: a.model.actor !== undefined }]
      : [],
  );
}

/**
 * Refuses, by field and before a run is created, an actor whose run does not exist, whose step that run
 * never checkpointed (or whose checkpoint was pruned), or whose actor that checkpoint does not hold.
 */
export async function runSourceIssues(db: Db, spec: RunSpec): Promise<FieldIssue[]> {
  const sources = runSourcesOf(spec);
  if (sources.length === 0) return [];
  const issues: FieldIssue[] = [];
  for (const s of sources) {
    const path = `actors.${s.index}.model`;
    const run = await db.run.findUnique({ where: { id: s.runId }, select: { id: true, name: true } });
    if (!run) {
      issues.push({ path: `${path}.runId`, message: `no run has id "${s.runId}"` });
      continue;
    }
    const rows = await db.runEvent.findMany({
      where: { runId: s.runId, type: { in: ["checkpoint", "checkpoint_pruned"] } },
      select: { seq: true, type: true, ts: true, payload: true },
    });
    const kept = checkpointsFromEvents(rows).filter((c) => c.pruned === null);
    const atStep = kept.filter((c) => c.step === s.step);
    if (atStep.length === 0) {
      const steps = [...new Set(kept.map((c) => c.step))].sort((a, b) => a - b);
      issues.push({
        path: `${path}.step`,
        message: `run "${run.name}" (${s.runId}) has no checkpoint at step ${s.step} (${steps.length > 0 ? `it has steps ${steps.join(", ")}` : "it has none"})`,
      });
      continue;
    }
    if (!atStep.some((c) => c.actor === s.fromActor)) {
      const held = atStep.map((c) => c.actor ?? "?").join(", ");
      issues.push({
        path: `${path}.${s.named ? "actor" : "runId"}`,
        message: `the step-${s.step} checkpoint of run "${run.name}" holds no actor "${s.fromActor}" (it holds ${held}): set model.actor`,
      });
    }
  }
  return issues;
}

export async function assertRunSourcesExist(db: Db, spec: RunSpec): Promise<void> {
  const issues = await runSourceIssues(db, spec);
  if (issues.length > 0) throw badRequest(issues, "invalid spec");
}
