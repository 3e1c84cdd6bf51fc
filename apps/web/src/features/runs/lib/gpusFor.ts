import type { RunSpec } from "@troupe/contracts";

/** GPUs the run asks a runner for: the distinct devices its actors are placed on (none on CPU). */
export const gpusFor = (spec: RunSpec) =>
  spec.trainer.device === "cpu" ? 0 : new Set(spec.actors.flatMap((a) => a.placement.gpus)).size;

/**
 * Why the GPU count a launcher asks for cannot be claimed (null: it can): any on a CPU run, or fewer than
 * the placement uses. The launch refuses with it (runs/server/createRun.ts) and the composer shows it first.
 */
export function claimedGpusIssue(spec: RunSpec, requested: number | undefined): { path: "gpus"; message: string } | null {
  if (requested === undefined) return null;
  const needed = gpusFor(spec);
  if (spec.trainer.device === "cpu" && requested > 0) {
    return { path: "gpus", message: "this run trains on the CPU (trainer.device is cpu): it claims no GPUs" };
  }
  if (requested < needed) {
    return { path: "gpus", message: `the actors are placed on ${needed} distinct GPUs (actors.*.placement.gpus): ask for at least ${needed}` };
  }
  return null;
}
