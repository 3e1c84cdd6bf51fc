import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { QUEUES, RewardTestResult } from "@troupe/contracts";
import type { z } from "zod";
import { runtimeEnv } from "../process/childEnv";

/** Seconds the Python process may take to start and import before the calls' own limits. */
const STARTUP_ALLOWANCE_S = 20;

export type RewardTestPayload = z.output<typeof QUEUES.rewardTests.jobs.test>;

export class RewardTestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RewardTestError";
  }
}

/**
 * Runs `python -m troupe.reward_test` with the job as stdin and returns its answer. The Python
 * side runs the user's code in the runtime's own reward worker (time and memory limits per
 * reward); this function only bounds the whole process, so a wedged interpreter cannot hold a
 * queue slot forever.
 */
export function runRewardTest(
  python: string,
  payload: RewardTestPayload,
  runnerId: string,
  parentEnv: NodeJS.ProcessEnv = process.env,
): Promise<RewardTestResult> {
  const env = runtimeEnv(parentEnv, { PYTHONUNBUFFERED: "1", CUDA_VISIBLE_DEVICES: "" }); // an allowlist, as for runs
  const budgetMs = (payload.reward.timeoutSeconds * (payload.calls.length + 1) + STARTUP_ALLOWANCE_S) * 1000;
  return new Promise((resolve, reject) => {
    const child = spawn(python, ["-m", "troupe.reward_test"], { cwd: tmpdir(), env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-8000)));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new RewardTestError(`the reward test ran past ${Math.round(budgetMs / 1000)} s and was stopped`));
    }, budgetMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new RewardTestError(`could not start ${python}: ${error.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      try {
        const answer = JSON.parse(stdout) as Record<string, unknown>;
        resolve(RewardTestResult.parse({ ...answer, runnerId }));
      } catch {
        reject(new RewardTestError(`the reward test process exited with code ${code} without an answer:\n${stderr.trim()}`));
      }
    });
    child.stdin.on("error", () => {}); // the process may exit before reading everything; `close` reports it
    child.stdin.end(JSON.stringify(payload));
  });
}
