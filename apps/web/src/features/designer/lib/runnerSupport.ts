/**
 * Choices the spec accepts but a runner may not be able to honour, with the reason shown beside the
 * field. Runners do not report what they have installed yet (a capability store is issue 16), so these
 * are stated from what the runtime refuses today, never detected: keep them in step with
 * gpu-runtime/src/troupe/spec/support.py.
 */

/** Options no runner can run today: shown disabled, with the reason. */
export const UNAVAILABLE = {
  /** The runtime refuses `backend: "vllm"` (support.py) until vLLM rollouts land. */
  actorBackend: { vllm: "needs vLLM on a runner; no runner has it" } as Record<string, string>,
};

/** Options a runner honours only with an extra installed: selectable, with the condition beside them. */
export const NEEDS_EXTRA = {
  trainBackend: {
    deepspeed:
      "needs the deepspeed package on the runner (pip install deepspeed) and CUDA GPUs: a runner without them refuses the run when it starts (Troupe cannot see runners' packages yet; on CPUs use fsdp2)",
  } as Record<string, string>,
  cluster: {
    ray: "needs Ray on the runner (pip install 'troupe[cluster]', or ray) and, with an address, a Ray cluster it can reach: otherwise the run is refused when it starts",
  } as Record<string, string>,
};
