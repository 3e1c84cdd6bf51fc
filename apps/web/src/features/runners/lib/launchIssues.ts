import { describeRunner, mostGpus, offeredRunners, runnerIssues, type FieldIssue, type RunnerOffer } from "@troupe/contracts";

/**
 * The launch check against the live runners, as a pure function of the spec and the runners' offers, so the
 * server's launch (features/runners/server/offers.ts) and the composer (before any click) run the same
 * check: the spec's demands (vLLM, DeepSpeed, GPUs, Ray, bf16, …, contracts `runnerIssues`) and the GPUs the
 * launch claims, against what each live runner reported. With no live runner, nothing is refused.
 */
export function launchIssuesAgainst(spec: unknown, runners: RunnerOffer[], claimedGpus = 0, now: Date = new Date()): FieldIssue[] {
  const issues = runnerIssues(spec, runners, now);
  const offered = offeredRunners(runners, now);
  const most = mostGpus(runners, now);
  if (issues.length === 0 && offered.length > 0 && claimedGpus > most) {
    issues.push({ path: "gpus", message: `claims ${claimedGpus} GPUs, but the largest live runner has ${most}; runners: ${offered.map(describeRunner).join(", ")}` });
  }
  return issues;
}
