import { parse, stats } from "@troupe/dsl";
import { estimateRunMemory, type MemoryAssumptions, type RunMemoryEstimate, type RunSpec } from "@troupe/contracts";

export { DEFAULT_ASSUMPTIONS, type MemoryAssumptions } from "@troupe/contracts";

/** Most turns (rounded up from the expected count) the actor takes in any environment it is in. */
export function turnsOf(spec: RunSpec, actor: string): number {
  let turns = 1;
  for (const env of spec.environments) {
    if (!env.actors.includes(actor) || !env.roundSpec) continue;
    const parsed = parse(env.roundSpec);
    if (!parsed.ok) continue;
    const expected = stats(parsed.ast, { actors: env.actors }).actors[actor]?.expectedTurns ?? 1;
    turns = Math.max(turns, Math.ceil(expected));
  }
  return turns;
}

/**
 * The contracts' estimate (packages/contracts/src/memory) with turns read from each environment's round
 * spec, for GPUs (the default: "will it fit on the runner's GPUs") or for host memory (`device` "cpu": where the
 * run will train on the CPU, see runs/lib/memoryTarget.ts).
 */
export function estimateSpecMemory(spec: RunSpec, a: MemoryAssumptions, device: "cpu" | "gpu" = "gpu"): RunMemoryEstimate {
  return estimateRunMemory(spec, a, (actor) => turnsOf(spec, actor), device);
}
