/**
 * Which memory the estimate is about: the GPUs or the host's RAM, decided by where the run trains, the same
 * way on the composer and on the run page. Before, one spec told three stories: `cuda:0` while queued on a
 * CPU host, "No local model" once it had run (the estimate was for cuda:0, the measurements for the CPU, so
 * no row matched), and "GPU 0 … of 80 GiB" in the composer of a CPU-only installation.
 */
export interface MemoryTarget {
  device: "cpu" | "gpu";
  /** Why, in words, shown beside the estimate. */
  why: string;
}

export interface WhereItRuns {
  /** Devices the run measured memory on (`cpu`, `cuda:0`…), once it has run. */
  measuredDevices?: readonly string[];
  /** The live runners: whether each has a CUDA GPU. */
  liveRunners?: readonly { cuda: boolean }[];
}

export function memoryTarget(spec: { trainer: { device: string } }, where: WhereItRuns = {}): MemoryTarget {
  if (spec.trainer.device === "cpu") return { device: "cpu", why: "trainer.device is cpu: host memory" };
  if (spec.trainer.device === "cuda") return { device: "gpu", why: "trainer.device is cuda: GPU memory" };
  const measured = where.measuredDevices ?? [];
  if (measured.length > 0) {
    return measured.some((d) => d.startsWith("cuda"))
      ? { device: "gpu", why: "it ran on GPUs: GPU memory" }
      : { device: "cpu", why: "it ran on a host without a GPU: host memory" };
  }
  const live = where.liveRunners ?? [];
  if (live.length > 0 && !live.some((r) => r.cuda)) return { device: "cpu", why: "no live runner has a GPU, so it trains on the CPU: host memory" };
  if (live.some((r) => r.cuda)) return { device: "gpu", why: "trainer.device is auto and a live runner has a GPU: GPU memory" };
  return { device: "gpu", why: "no runner has reported yet; assuming a GPU" };
}

/** A runner offer's GPU, as the launch check reads it (contracts hasCapability "cuda"). */
export function offerHasCuda(offer: { capabilities: { cuda: string | null; gpus: readonly unknown[] } | null; gpus: readonly unknown[] }): boolean {
  return offer.capabilities !== null && offer.capabilities.cuda !== null && offer.capabilities.gpus.length > 0 && offer.gpus.length > 0;
}
