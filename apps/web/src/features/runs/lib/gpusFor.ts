import { defaultGpuCount, gpuClaimOf, type RunSpec } from "@troupe/contracts";

/**
 * GPUs the run asks a runner for by default (contracts gpuClaim.ts): the distinct GPUs its actors are
 * placed on, else one per local model when it may use a GPU (`trainer.device` auto or cuda), none on CPU.
 */
export const gpusFor = (spec: RunSpec) => defaultGpuCount(spec);

/**
 * Why the GPU count a launcher asks for cannot be claimed (null: it can): any for a run on the CPU, fewer than
 * the placement names, or none for a `cuda` run. More is fine (to keep a whole node); fewer or none for an
 * unplaced "auto" run means its models share GPUs or train on the CPU. The launch refuses with it
 * (runs/server/createRun.ts) and the composer shows it first.
 */
export function claimedGpusIssue(spec: RunSpec, requested: number | undefined): { path: "gpus"; message: string } | null {
  if (requested === undefined) return null;
  const needed = gpusFor(spec);
  const claim = gpuClaimOf(spec, requested);
  if (claim.kind === "cpu" && requested > 0) {
    const why = spec.trainer.device === "cpu" ? "trainer.device is cpu" : "its actors run on CPU processes (placement.processes) or behind an API";
    return { path: "gpus", message: `this run trains on the CPU (${why}): it claims no GPUs` };
  }
  if (claim.kind === "ids" && requested < needed) {
    return { path: "gpus", message: `the actors are placed on ${needed} distinct GPUs (actors.*.placement.gpus): ask for at least ${needed}` };
  }
  if (claim.kind === "auto" && requested === 0 && spec.trainer.device === "cuda") {
    return { path: "gpus", message: 'trainer.device is "cuda": claim at least 1 GPU' };
  }
  return null;
}
