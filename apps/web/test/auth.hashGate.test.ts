import { describe, expect, it } from "vitest";
import { HashBusyError, HashGate } from "../src/features/auth/server/hashGate";

/** The gate in front of scrypt: never more than N at once, a bounded line, then "busy". */
describe("HashGate", () => {
  it("runs at most `concurrency` at once, in arrival order, and refuses beyond the line", async () => {
    const gate = new HashGate(2, 3);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const work = (k: number) => async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 20));
      order.push(k);
      running--;
      return k;
    };
    const accepted = [0, 1, 2, 3, 4].map((k) => gate.run(work(k)));
    const refused = gate.run(work(5));
    await expect(refused).rejects.toBeInstanceOf(HashBusyError);
    expect(await Promise.all(accepted)).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    expect(gate.peak).toBe(2);
    expect(order.slice(2)).toEqual([2, 3, 4]);
    // Slots are handed back: the gate is free again afterwards, also after a failing job.
    await expect(gate.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await Promise.all([gate.run(async () => 7), gate.run(async () => 8)])).toEqual([7, 8]);
  });
});

describe("the decoy hash behind the gate", () => {
  it("a decoy refused as busy is computed again by the next sign-in, not cached as a failure", async () => {
    process.env.DATABASE_URL ??= "postgresql://unused";
    process.env.REDIS_URL ??= "redis://unused";
    const { decoyHash, hashGate } = await import("../src/features/auth/server/password");
    const gate = hashGate();
    // Fill every slot and the line with work that waits until released.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const blockers = Array.from({ length: gate.concurrency + gate.maxWaiting }, () => gate.run(() => held));
    await expect(decoyHash()).rejects.toBeInstanceOf(HashBusyError);
    release();
    await Promise.all(blockers);
    expect(await decoyHash()).toMatch(/^scrypt\$/);
  });
});
