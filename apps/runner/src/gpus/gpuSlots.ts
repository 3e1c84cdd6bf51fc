/**
 * The GPUs of this host, handed out to runs by index. A run that needs more than are free waits
 * (first come, first served) until enough are released; CPU runs ask for 0 and never wait.
 */
export class GpuSlots {
  private readonly free: Set<number>;
  private readonly waiting: { count: number; holder: string | null; resolve: (ids: number[]) => void; reject: (e: Error) => void }[] = [];
  /** GPU index → the run holding it (what the runner's presence heartbeat publishes). */
  private readonly holders = new Map<number, string | null>();

  constructor(readonly total: number) {
    this.free = new Set(Array.from({ length: total }, (_, i) => i));
  }

  get freeCount(): number {
    return this.free.size;
  }

  /** Resolves with the GPU indices granted. Rejects at once if the host can never satisfy it, or on abort. */
  acquire(count: number, signal?: AbortSignal, holder: string | null = null): Promise<number[]> {
    if (count > this.total) {
      return Promise.reject(
        new Error(`the run needs ${count} GPU(s) but this runner has ${this.total} (set TROUPE_RUNNER_GPUS or use a bigger host)`),
      );
    }
    if (this.waiting.length === 0) {
      const ids = this.take(count, holder);
      if (ids) return Promise.resolve(ids);
    }
    return new Promise((resolve, reject) => {
      const waiter = { count, holder, resolve, reject };
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

  private take(count: number, holder: string | null): number[] | null {
    if (this.free.size < count) return null;
    const ids = [...this.free].sort((a, b) => a - b).slice(0, count);
    for (const id of ids) {
      this.free.delete(id);
      this.holders.set(id, holder);
    }
    return ids;
  }

  /** Serves waiters in order; the head blocks the rest so a big run is not starved by small ones. */
  private grant(): void {
    while (this.waiting.length > 0) {
      const ids = this.take(this.waiting[0]!.count, this.waiting[0]!.holder);
      if (!ids) return;
      this.waiting.shift()!.resolve(ids);
    }
  }
}
