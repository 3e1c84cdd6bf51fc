/**
 * The GPUs of this host, handed out to runs by index. A run that needs more than are free waits
 * (first come, first served) until enough are released; CPU runs ask for 0 and never wait.
 */
export class GpuSlots {
  private readonly free: Set<number>;
  private readonly waiting: { count: number; resolve: (ids: number[]) => void; reject: (e: Error) => void }[] = [];

  constructor(readonly total: number) {
    this.free = new Set(Array.from({ length: total }, (_, i) => i));
  }

  get freeCount(): number {
    return this.free.size;
  }

  /** Resolves with the GPU indices granted. Rejects at once if the host can never satisfy it, or on abort. */
  acquire(count: number, signal?: AbortSignal): Promise<number[]> {
    if (count > this.total) {
      return Promise.reject(
        new Error(`the run needs ${count} GPU(s) but this runner has ${this.total} (set TROUPE_RUNNER_GPUS or use a bigger host)`),
      );
    }
    if (this.waiting.length === 0) {
      const ids = this.take(count);
      if (ids) return Promise.resolve(ids);
    }
    return new Promise((resolve, reject) => {
      const waiter = { count, resolve, reject };
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
    for (const id of ids) this.free.add(id);
    this.grant();
  }

  private take(count: number): number[] | null {
    if (this.free.size < count) return null;
    const ids = [...this.free].sort((a, b) => a - b).slice(0, count);
    for (const id of ids) this.free.delete(id);
    return ids;
  }

  /** Serves waiters in order; the head blocks the rest so a big run is not starved by small ones. */
  private grant(): void {
    while (this.waiting.length > 0) {
      const ids = this.take(this.waiting[0]!.count);
      if (!ids) return;
      this.waiting.shift()!.resolve(ids);
    }
  }
}
