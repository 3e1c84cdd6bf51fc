import { describe, expect, it } from "vitest";
import { GpuSlots } from "../src/gpus/gpuSlots";

describe("GpuSlots", () => {
  it("grants free GPUs at once and CPU runs (0) always", async () => {
    const slots = new GpuSlots(2);
    expect(await slots.acquire(0)).toEqual([]);
    expect(await slots.acquire(1)).toEqual([0]);
    expect(await slots.acquire(1)).toEqual([1]);
    expect(slots.freeCount).toBe(0);
    expect(await slots.acquire(0)).toEqual([]);
  });

  it("makes a run wait until enough GPUs are released, first come first served", async () => {
    const slots = new GpuSlots(2);
    const first = await slots.acquire(2);
    const order: string[] = [];
    const big = slots.acquire(2).then((ids) => (order.push("big"), ids));
    const small = slots.acquire(1).then((ids) => (order.push("small"), ids));
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    slots.release([first[0]!]);
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]); // the head of the line needs 2
    slots.release([first[1]!]);
    expect(await big).toEqual([0, 1]);
    slots.release([0]);
    expect(await small).toEqual([0]);
    expect(order).toEqual(["big", "small"]);
  });

  it("refuses a run that needs more GPUs than the host has", async () => {
    await expect(new GpuSlots(1).acquire(2)).rejects.toThrow(/needs 2 GPU\(s\) but this runner has 1/);
  });

  it("gives up waiting on abort and lets the next waiter through", async () => {
    const slots = new GpuSlots(1);
    const held = await slots.acquire(1);
    const abort = new AbortController();
    const aborted = slots.acquire(1, abort.signal);
    const next = slots.acquire(1);
    abort.abort();
    await expect(aborted).rejects.toThrow(/gave up/);
    slots.release(held);
    expect(await next).toEqual([0]);
  });

  it("grants a placement's own GPU indices, the host's numbering (issue #25)", async () => {
    const slots = new GpuSlots(2);
    expect(await slots.acquire(1, undefined, "a", [1])).toEqual([1]);
    expect(slots.occupancy()).toEqual([{ index: 0, runId: null }, { index: 1, runId: "a" }]);
    expect(await slots.acquire(1, undefined, "b")).toEqual([0]);
    slots.release([0]);
    // More than the placement names: its GPUs plus the lowest free others.
    slots.release([1]);
    expect(await slots.acquire(2, undefined, "c", [1])).toEqual([0, 1]);
  });

  it("makes a run naming a held GPU wait for that one, not any free one", async () => {
    const slots = new GpuSlots(2);
    expect(await slots.acquire(1, undefined, "a", [1])).toEqual([1]);
    let got: number[] | null = null;
    const waiting = slots.acquire(1, undefined, "b", [1]).then((ids) => (got = ids));
    await new Promise((r) => setTimeout(r, 10));
    expect(got).toBeNull(); // GPU 0 is free, but the run is placed on 1
    slots.release([1]);
    expect(await waiting).toEqual([1]);
  });

  it("refuses at once a GPU the host does not have", async () => {
    await expect(new GpuSlots(2).acquire(1, undefined, "a", [2])).rejects.toThrow(/names GPU 2 but this runner has 2 \(indices 0-1\)/);
  });
});

