import { describeRunner, hasCapability, mostGpus, offeredRunners, runnerIssues, storedGpuClaim, type FieldIssue, type RunnerOffer } from "@troupe/contracts";

/**
 * The launch check against the live runners, as a pure function of the spec and the runners' offers, so the
 * server's launch (features/runners/server/offers.ts) and the composer (before any click) run the same
 * check: the spec's demands (vLLM, DeepSpeed, GPUs, Ray, bf16, …, contracts `runnerIssues`) and the GPUs the
 * launch claims, against what each live runner reported. With no live runner, nothing is refused.
 */
export function launchIssuesAgainst(spec: unknown, runners: RunnerOffer[], claimedGpus = 0, now: Date = new Date()): FieldIssue[] {
  const issues = runnerIssues(spec, runners, now);
  const offered = offeredRunners(runners, now);
  issues.push(...offloadIssues(spec, offered));
  const most = mostGpus(runners, now);
  // An unplaced "auto" run takes at most what a runner has (gpuClaim.ts): only a fixed claim can be too big.
  const fixed = storedGpuClaim(spec, claimedGpus).kind !== "auto";
  if (issues.length === 0 && offered.length > 0 && fixed && claimedGpus > most) {
    issues.push({ path: "gpus", message: `claims ${claimedGpus} GPUs, but the largest live runner has ${most}; runners: ${offered.map(describeRunner).join(", ")}` });
  }
  return issues;
}

type OffloadSpec = { trainer?: { device?: string }; actors?: { backend?: string; training?: { offload?: { params?: boolean; optimizer?: boolean } } }[] };

/**
 * Offloading moves an actor's parameters or optimizer state out of GPU memory into host memory; where the run
 * trains on the CPU there is nothing to move, and the option was saved, launched and did nothing. Refused
 * here (launch and composer) rather than by the runtime, which offloads CPU to CPU on purpose in its tests:
 * the moves and books are the same as on a GPU host (gpu-runtime/tests/test_residency.py).
 */
export function offloadIssues(spec: unknown, offered: RunnerOffer[]): FieldIssue[] {
  const s = spec as OffloadSpec | null;
  const device = s?.trainer?.device;
  const noGpuRunner = offered.length > 0 && !offered.some((r) => r.capabilities !== null && hasCapability(r.capabilities, "cuda"));
  const why =
    device === "cpu"
      ? "the run trains on the CPU (trainer.device is cpu)"
      : device !== "cuda" && noGpuRunner
        ? `no live runner has a CUDA GPU, so it trains on the CPU; runners: ${offered.map(describeRunner).join(", ")}`
        : null;
  if (why === null) return [];
  const out: FieldIssue[] = [];
  (s?.actors ?? []).forEach((actor, i) => {
    if (actor.backend === "openai") return;
    for (const [part, what] of [["params", "parameters"], ["optimizer", "optimizer state"]] as const) {
      if (actor.training?.offload?.[part]) {
        out.push({ path: `actors.${i}.training.offload.${part}`, message: `offloading moves ${what} out of GPU memory, but ${why}: it would do nothing; turn it off` });
      }
    }
  });
  return out;
}
