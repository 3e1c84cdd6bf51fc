/**
 * Collects items and hands them to `flush` in batches: when `maxItems` are waiting, or
 * `maxDelayMs` after the first item of a batch arrived. Flushes run one at a time, in order.
 * A failed flush keeps its items at the front and is retried after `retryDelayMs`, so a
 * database hiccup delays events instead of losing them; `drain` gives up after `maxAttempts`
 * consecutive failures and throws the last error.
 */
export interface BatcherOptions<T> {
  maxItems: number;
  maxDelayMs: number;
  flush: (items: T[]) => Promise<void>;
  onError?: (error: unknown, attempt: number) => void;
  retryDelayMs?: number;
  maxAttempts?: number;
}

export class Batcher<T> {
  private items: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private failures = 0;
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

  /** Flushes everything (retrying failures) and resolves once nothing is pending. */
  async drain(): Promise<void> {
    this.clearTimer();
    const maxAttempts = this.options.maxAttempts ?? 5;
    for (;;) {
      await this.enqueueFlush();
      this.clearTimer(); // drain drives the retries itself
      if (this.items.length === 0) return;
      if (this.failures >= maxAttempts) throw this.lastError;
      if (this.failures > 0) await sleep(this.options.retryDelayMs ?? 500);
    }
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
      if (this.items.length >= this.options.maxItems) this.schedule(0);
      else if (this.items.length > 0) this.schedule(this.options.maxDelayMs);
    } catch (error) {
      this.items.unshift(...batch);
      this.failures += 1;
      this.lastError = error;
      this.options.onError?.(error, this.failures);
      this.schedule(this.options.retryDelayMs ?? 500);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
