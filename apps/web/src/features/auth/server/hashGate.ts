/**
 * At most N password hashes at once in this process, and a bounded line of waiters. scrypt runs on
 * libuv's thread pool (4 threads by default) and costs ~100 ms of a core and 32 MiB each: a burst of
 * wrong passwords used to take every pool thread and core, and the health check went from 20 ms to
 * 1.4 s for everyone. Behind this gate a burst waits its turn (or is told "busy" when the line is
 * full) while the rest of the app keeps its cores.
 */

export class HashBusyError extends Error {
  constructor() {
    super("too many sign-ins are being checked right now; try again in a moment");
    this.name = "HashBusyError";
  }
}

export class HashGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Highest number of hashes that ran at once (for tests and the report). */
  peak = 0;

  constructor(
    readonly concurrency: number,
    readonly maxWaiting: number,
  ) {}

  /** Runs `work` when a slot is free; throws HashBusyError at once when the line is full. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxWaiting) throw new HashBusyError();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    this.peak = Math.max(this.peak, this.running);
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter (running stays the same), or is freed.
      if (next) next();
      else this.running--;
    }
  }
}
