/**
 * Choices the spec accepts but a runner may not be able to honour, with the reason shown beside the
 * field. What is unavailable comes from the live runners (`runner.support`: each requirement of
 * contracts RUNNER_REQUIREMENTS no live runner meets, with the runners listed), the same table the
 * launch check refuses with, so a choice the designer offers works on some live runner or is disabled
 * with the reason. With no live runner reporting (a fresh start), nothing is known to be impossible:
 * nothing is disabled, and the conditions below are shown while an option is chosen.
 */

/** `runner.support`'s answer. */
export interface LiveRunnerSupport {
  live: number;
  unavailable: Record<string, string | null>;
}

const only = (entries: [string, string | null | undefined][]): Record<string, string> =>
  Object.fromEntries(entries.filter((e): e is [string, string] => typeof e[1] === "string"));

/** Options no live runner can honour, per field: shown disabled, with the reason. */
export function unavailableOptions(support: LiveRunnerSupport | undefined) {
  const u = support?.unavailable ?? {};
  return {
    actorBackend: only([["vllm", u.vllm]]),
    trainBackend: only([["deepspeed", u.deepspeed]]),
    precision: only([["bf16", u.bf16]]),
    cluster: only([["ray", u.ray]]),
    device: only([["cuda", u.cudaDevice]]),
    /** Environment kinds a runner needs something for (`game`: PettingZoo; `code`, `tools`: a usable sandbox). */
    environmentKind: only([
      ["game", u.pettingzoo],
      ["code", u.codeEnvironment],
      ["tools", u.toolsEnvironment],
    ]),
    /** Python rewards: a note beside the code (no live runner can start a sandbox for user code). */
    pythonReward: u.pythonReward ?? null,
    /** Placing an actor on GPUs: a note beside the GPU list (no live runner has a CUDA GPU). */
    gpus: u.gpus ?? null,
    /** Offloading parameters / optimizer state: a note beside the checkbox (no live runner has a GPU to offload from). */
    offloadParams: u.cudaDevice ?? null,
    offloadOptimizer: u.cudaDevice ?? null,
    /** LoRA adapters: a note beside the checkbox (no live runner has PEFT). */
    lora: u.lora ?? null,
    /** A remote environment's grpc:// url: a note beside the URL (no live runner has grpcio and protobuf). */
    grpcUrl: u.grpc ?? null,
    /** Chess (`game.name: "chess"`): a note beside the game's name (no live runner has Node.js with chess.js). */
    chess: u.chess ?? null,
    /** Trackers (`trainer.trackers`) whose package no live runner has: their add button disabled, with the reason. */
    tracker: only([
      ["tensorboard", u.tensorboard],
      ["wandb", u.wandb],
    ]),
  };
}
export type UnavailableOptions = ReturnType<typeof unavailableOptions>;

/** Options a runner honours only with an extra installed: selectable, with the condition beside them. */
export const NEEDS_EXTRA = {
  trainBackend: {
    deepspeed:
      "needs the deepspeed package on the runner (pip install deepspeed) and CUDA GPUs: a launch is refused while no live runner has them (on CPUs use fsdp2)",
  } as Record<string, string>,
  cluster: {
    ray: "needs Ray on the runner (pip install 'troupe[cluster]', or ray) and, with an address, a Ray cluster it can reach: a launch is refused while no live runner has Ray",
  } as Record<string, string>,
};
