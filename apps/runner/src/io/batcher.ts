/**
 * Collects items and hands them to `flush` in batches: when `maxItems` are waiting, or
 * `maxDelayMs` after the first item of a batch arrived. Flushes run one at a time, in order.
 * A failed flush keeps its items at the front and is retried with a doubling delay
 * (`retryDelayMs` up to `maxRetryDelayMs`), so a database outage delays events instead of losing
 * them. `drain` keeps retrying until `giveUpAfterMs` of consecutive failures (or `maxAttempts`
 * failed flushes) and then throws the last error: a run's final events wait out an outage of
 * that length (TROUPE_DB_RETRY_MS) instead of being dropped after a few seconds.
 */
export interface BatcherOptions<T> {
  maxItems: number;
  maxDelayMs: number;
  flush: (items: T[]) => Promise<void>;
  onError?: (error: unknown, attempt: number) => void;
  /** First retry delay (default 500 ms); doubles per consecutive failure up to maxRetryDelayMs. */
  retryDelayMs?: number;
  /** Longest delay between two retries (default 10 s). */
  maxRetryDelayMs?: number;
  /** `drain` throws once the failures have lasted this long (default: never by time). */
  giveUpAfterMs?: number;
  /** `drain` throws after this many consecutive failed flushes (default: never by count). */
  maxAttempts?: number;
}

export class Batcher<T> {
  private items: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private failures = 0;
  /** When the current run of consecutive failures began (Date.now()), or null. */
  private failingSince: number | null = null;
  private lastError: unknown = null;

  constructor(private readonly options: BatcherOptions<T>) {}

  get pending(): number {
    return this.items.length;
  }

  push(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.options.maxItems) this.schedule(0);
    else this.schedule(this.options.maxDelayMs);
  }

  /** Flushes everything (retrying failures within the bounds) and resolves once nothing is pending. */
  async drain(): Promise<void> {
    this.clearTimer();
    const maxAttempts = this.options.maxAttempts ?? Number.POSITIVE_INFINITY;
    const giveUpAfterMs = this.options.giveUpAfterMs ?? Number.POSITIVE_INFINITY;
    for (;;) {
      await this.enqueueFlush();
      this.clearTimer(); // drain drives the retries itself
      if (this.items.length === 0) return;
      if (this.failures === 0) continue;
      const failingFor = Date.now() - (this.failingSince ?? Date.now());
      if (this.failures >= maxAttempts || failingFor >= giveUpAfterMs) throw this.lastError;
      await sleep(Math.min(this.retryDelay(), Math.max(0, giveUpAfterMs - failingFor)));
    }
  }

  /** The delay before the next retry: doubling per consecutive failure, capped. */
  private retryDelay(): number {
    const first = this.options.retryDelayMs ?? 500;
    const cap = this.options.maxRetryDelayMs ?? 10_000;
    return Math.min(cap, first * 2 ** Math.min(20, Math.max(0, this.failures - 1)));
  }

  private schedule(delayMs: number): void {
    if (this.timer && delayMs > 0) return; // a flush is already due sooner or at the same time
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.enqueueFlush();
    }, delayMs);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private enqueueFlush(): Promise<void> {
    this.running = this.running.then(() => this.flushOnce());
    return this.running;
  }

  private async flushOnce(): Promise<void> {
    if (this.items.length === 0) return;
    const batch = this.items.splice(0, this.options.maxItems);
    try {
      await this.options.flush(batch);
      this.failures = 0;
      this.failingSince = null;
      if (this.items.length >= this.options.maxItems) this.schedule(0);
      else if (this.items.length > 0) this.schedule(this.options.maxDelayMs);
    } catch (error) {
      this.items.unshift(...batch);
      this.failures += 1;
      this.failingSince ??= Date.now();
      this.lastError = error;
      this.options.onError?.(error, this.failures);
      this.schedule(this.retryDelay());
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
