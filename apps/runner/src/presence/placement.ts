import { gpusOnRunner, meets, offeredRunners, runnerOffer, specRequirements, type RunnerOffer } from "@troupe/contracts";
import type { RunnerContext } from "../context";

/**
 * Whether this runner should leave a queued run to another: BullMQ hands a job to whichever runner asks
 * first, so a runner that cannot run a run (too few GPUs, no vLLM, …) while another live runner can hands
 * the job back instead of failing the run. With no such runner the run is failed here as before, with
 * the reason (the launch check refuses most of these before they are queued).
 */
export async function betterRunnerFor(ctx: RunnerContext, run: { spec: unknown; gpus: number }): Promise<string | null> {
  const rows = await ctx.db.runner.findMany();
  const offers: RunnerOffer[] = rows.map((row) => runnerOffer(row, 0));
  const needs = specRequirements(run.spec);
  // What the run takes of each runner's GPUs (an "auto" claim: at most what it has; gpuClaim.ts).
  const gpusFit = (total: number) => gpusOnRunner(run.spec, run.gpus, total) !== null;
  const fits = (r: RunnerOffer) => gpusFit(r.gpus.length) && needs.every((n) => meets(r, n));
  const self = offers.find((r) => r.id === ctx.env.runnerId);
  // Unknown about itself (capabilities not probed yet): only the GPU count is certain.
  const selfFits = self?.capabilities ? fits(self) : gpusFit(ctx.gpus.total);
  if (selfFits) return null;
  return offeredRunners(offers).find((r) => r.id !== ctx.env.runnerId && fits(r))?.id ?? null;
}
