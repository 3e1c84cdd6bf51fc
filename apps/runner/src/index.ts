export { startRunner, type Runner, type RunnerOptions } from "./runner";
export { loadRunnerEnv, EnvError, type RunnerEnv } from "./env";
export { runJob, type JobResult } from "./run/runJob";
export { recoverOwnRuns, sweepStalledRuns } from "./run/recovery";
export type { RunnerContext } from "./context";
export { startRewardTestWorker } from "./rewardTest/rewardTestWorker";
export { consoleLog, memoryLog, type RunnerLog } from "./log";
