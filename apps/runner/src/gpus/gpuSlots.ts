/**
 * The GPUs of this host, handed out to runs by index (the host's own numbering, nvidia-smi's). A run that
 * needs more than are free, or names GPUs that are held, waits (first come, first served) until they are
 * released; CPU runs ask for 0 and never wait.
 */
export class GpuSlots {
  private readonly free: Set<number>;
  private readonly waiting: { count: number; named: readonly number[]; holder: string | null; resolve: (ids: number[]) => void; reject: (e: Error) => void }[] = [];
  /** GPU index → the run holding it (what the runner's presence heartbeat publishes). */
  private readonly holders = new Map<number, string | null>();

  constructor(readonly total: number) {
    this.free = new Set(Array.from({ length: total }, (_, i) => i));
  }

  get freeCount(): number {
    return this.free.size;
  }

  /**
   * Resolves with the GPU indices granted: `named` ones (a placement's `gpus`, in this host's numbering)
   * and the lowest free others up to `count`. Rejects at once if the host can never satisfy it, or on abort.
   */
  acquire(count: number, signal?: AbortSignal, holder: string | null = null, named: readonly number[] = []): Promise<number[]> {
    const outside = named.filter((id) => !Number.isInteger(id) || id < 0 || id >= this.total);
    if (outside.length > 0) {
      return Promise.reject(new Error(`the run names GPU ${outside.join(", ")} but this runner has ${this.total} (indices ${this.total > 0 ? `0-${this.total - 1}` : "none"})`));
    }
    count = Math.max(count, new Set(named).size);
    if (count > this.total) {
      return Promise.reject(
        new Error(`the run needs ${count} GPU(s) but this runner has ${this.total} (set TROUPE_RUNNER_GPUS or use a bigger host)`),
      );
    }
    if (this.waiting.length === 0) {
      const ids = this.take(count, named, holder);
      if (ids) return Promise.resolve(ids);
    }
    return new Promise((resolve, reject) => {
      const waiter = { count, named, holder, resolve, reject };
      this.waiting.push(waiter);
      signal?.addEventListener(
        "abort",
        () => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) {
            this.waiting.splice(at, 1);
            reject(new Error("gave up waiting for GPUs"));
            this.grant();
          }
        },
        { once: true },
      );
    });
  }

  release(ids: readonly number[]): void {
    for (const id of ids) {
      this.free.add(id);
      this.holders.delete(id);
    }
    this.grant();
  }

  /** Each GPU index with the run holding it (null: free, or held by a caller that named no run). */
  occupancy(): { index: number; runId: string | null }[] {
    return Array.from({ length: this.total }, (_, index) => ({ index, runId: this.holders.get(index) ?? null }));
  }

  private take(count: number, named: readonly number[], holder: string | null): number[] | null {
    const wanted = [...new Set(named)];
    if (wanted.some((id) => !this.free.has(id))) return null;
    const others = [...this.free].filter((id) => !wanted.includes(id)).sort((a, b) => a - b);
    if (wanted.length + others.length < count) return null;
    const ids = [...wanted, ...others.slice(0, Math.max(0, count - wanted.length))].sort((a, b) => a - b);
    for (const id of ids) {
      this.free.delete(id);
      this.holders.set(id, holder);
    }
    return ids;
  }

  /** Serves waiters in order; the head blocks the rest so a big run is not starved by small ones. */
  private grant(): void {
    while (this.waiting.length > 0) {
      const head = this.waiting[0]!;
      const ids = this.take(head.count, head.named, head.holder);
      if (!ids) return;
      this.waiting.shift()!.resolve(ids);
    }
  }
}
