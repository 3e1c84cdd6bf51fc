/**
 * Which of a runner's GPUs a run claims: one rule for the web's launch check, the queue's waiting reason
 * and the runner's slots (issue #25). GPU indices are the runner's own (nvidia-smi's numbering, what
 * /runners lists); the runtime is handed exactly the granted devices (CUDA_VISIBLE_DEVICES) and told their
 * host numbers (TROUPE_GPU_IDS) so that `placement.gpus: [1]` means the runner's GPU 1.
 *
 *  - `cpu`: `trainer.device: "cpu"`, CPU ranks (`placement.processes`), or only API actors: no GPU.
 *  - `ids`: some local actor names GPUs (`placement.gpus`): those exact ones, plus any free others when the
 *    launch asks for more than they are.
 *  - `auto`: `trainer.device` "auto" or "cuda" and no placement: one GPU per local model that needs its
 *    own (a LoRA actor on a base another one already loaded shares its GPU), at most the runner's; on a
 *    runner without GPUs an "auto" run trains on its CPU, a "cuda" one cannot run there.
 */

import { z } from "zod";

/** The parts of a (parsed) RunSpec the claim reads: the runner and the queue read it from a stored spec. */
export const ClaimSpec = z.looseObject({
  trainer: z.looseObject({ device: z.string() }),
  actors: z.array(
    z.looseObject({
      backend: z.string(),
      trainable: z.boolean().optional(),
      model: z.unknown().optional(),
      training: z.looseObject({ lora: z.unknown().optional() }).optional(),
      placement: z.looseObject({ gpus: z.array(z.number().int()), processes: z.number().int().optional() }),
    }),
  ),
});
export type ClaimSpec = z.infer<typeof ClaimSpec>;

export type GpuClaim =
  | { kind: "cpu" }
  | { kind: "ids"; ids: number[]; count: number }
  | { kind: "auto"; count: number; cpuFallback: boolean };

const isLocal = (a: ClaimSpec["actors"][number]) => a.backend !== "openai";

/** Local models that need a device of their own: LoRA actors on one base share it (shared_lora.base_key). */
export function ownModels(spec: ClaimSpec): number {
  const bases = new Set<string>();
  let count = 0;
  for (const a of spec.actors.filter(isLocal)) {
    if (a.backend === "hf" && a.trainable && a.training?.lora !== undefined) {
      const key = JSON.stringify(a.model, Object.keys((a.model as object) ?? {}).sort());
      if (bases.has(key)) continue;
      bases.add(key);
    }
    count += 1;
  }
  return count;
}

/** The GPU ids the placement names, distinct and sorted. */
export function placedGpus(spec: ClaimSpec): number[] {
  return [...new Set(spec.actors.filter(isLocal).flatMap((a) => a.placement.gpus))].sort((a, b) => a - b);
}

function onCpu(spec: ClaimSpec): boolean {
  const local = spec.actors.filter(isLocal);
  return spec.trainer.device === "cpu" || local.length === 0 || local.some((a) => a.placement.processes !== undefined);
}

/** The GPUs a launch claims by default (what the Run row's `gpus` stores when the launcher asks for none). */
export function defaultGpuCount(spec: ClaimSpec): number {
  if (onCpu(spec)) return 0;
  const ids = placedGpus(spec);
  return ids.length > 0 ? ids.length : ownModels(spec);
}

/** The claim of a spec whose launch asked for `count` GPUs (the Run row's `gpus`). */
export function gpuClaimOf(spec: ClaimSpec, count: number): GpuClaim {
  if (onCpu(spec)) return { kind: "cpu" };
  const ids = placedGpus(spec);
  if (ids.length > 0) return { kind: "ids", ids, count: Math.max(count, ids.length) };
  return { kind: "auto", count, cpuFallback: spec.trainer.device === "auto" };
}

/**
 * How a runner with `total` GPUs serves a claim: how many it takes (and which, for `ids`), or why it cannot.
 * An `auto` claim takes at most what the runner has: several models then share its GPUs.
 */
export function claimOnRunner(claim: GpuClaim, total: number): { count: number; ids: number[] } | { refused: string } {
  if (claim.kind === "cpu") return { count: 0, ids: [] };
  if (claim.kind === "ids") {
    const missing = claim.ids.filter((id) => id >= total);
    if (missing.length > 0) {
      return { refused: `the actors are placed on GPU ${missing.join(", ")} (actors.*.placement.gpus), but this runner has ${total} GPU(s) (indices ${total > 0 ? `0-${total - 1}` : "none"})` };
    }
    if (claim.count > total) return { refused: `the run needs ${claim.count} GPU(s) but this runner has ${total} (set TROUPE_RUNNER_GPUS or use a bigger host)` };
    return { count: claim.count, ids: claim.ids };
  }
  if (total === 0) {
    return claim.cpuFallback || claim.count === 0 ? { count: 0, ids: [] } : { refused: 'trainer.device is "cuda", but this runner has no GPUs' };
  }
  return { count: Math.min(claim.count, total), ids: [] };
}

/** The claim of a stored spec (the Run row's JSON); a spec in an unexpected shape claims `count` GPUs, as before #25. */
export function storedGpuClaim(spec: unknown, count: number): GpuClaim {
  const parsed = ClaimSpec.safeParse(spec);
  return parsed.success ? gpuClaimOf(parsed.data, count) : { kind: "ids", ids: [], count };
}

/** GPUs the run takes on a runner with `total` (null: it cannot run there). */
export function gpusOnRunner(spec: unknown, count: number, total: number): number | null {
  const on = claimOnRunner(storedGpuClaim(spec, count), total);
  return "refused" in on ? null : on.count;
}
