import { describe, expect, it } from "vitest";
import { Batcher } from "../src/io/batcher";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Batcher", () => {
  it("flushes when maxItems are waiting, without waiting for the delay", async () => {
    const batches: number[][] = [];
    const b = new Batcher<number>({ maxItems: 3, maxDelayMs: 10_000, flush: async (items) => void batches.push(items) });
    for (let i = 1; i <= 7; i++) b.push(i);
    await sleep(20);
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6]]);
    await b.drain();
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it("flushes a partial batch after maxDelayMs", async () => {
    const batches: number[][] = [];
    const b = new Batcher<number>({ maxItems: 100, maxDelayMs: 30, flush: async (items) => void batches.push(items) });
    b.push(1);
    b.push(2);
    expect(batches).toEqual([]);
    await sleep(80);
    expect(batches).toEqual([[1, 2]]);
  });

  it("runs flushes one at a time and in order", async () => {
    let running = 0;
    let maxRunning = 0;
    const seen: number[] = [];
    const b = new Batcher<number>({
      maxItems: 2,
      maxDelayMs: 1,
      flush: async (items) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await sleep(10);
        seen.push(...items);
        running -= 1;
      },
    });
    for (let i = 0; i < 9; i++) b.push(i);
    await b.drain();
    expect(maxRunning).toBe(1);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("keeps a failed batch and retries it, in order", async () => {
    const seen: number[] = [];
    let failuresLeft = 2;
    const errors: number[] = [];
    const b = new Batcher<number>({
      maxItems: 10,
      maxDelayMs: 1,
      retryDelayMs: 5,
      onError: (_e, attempt) => errors.push(attempt),
      flush: async (items) => {
        if (failuresLeft-- > 0) throw new Error("database away");
        seen.push(...items);
      },
    });
    b.push(1);
    b.push(2);
    await sleep(5);
    b.push(3);
    await b.drain();
    expect(seen).toEqual([1, 2, 3]);
    expect(errors).toEqual([1, 2]);
  });

  it("drain gives up after maxAttempts and throws the last error", async () => {
    const b = new Batcher<number>({
      maxItems: 10,
      maxDelayMs: 1000,
      retryDelayMs: 1,
      maxAttempts: 3,
      flush: async () => {
        throw new Error("still away");
      },
    });
    b.push(1);
    await expect(b.drain()).rejects.toThrow("still away");
    expect(b.pending).toBe(1);
  });
});
