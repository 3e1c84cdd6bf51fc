import { describe, expect, it } from "vitest";
import { emaDebiased } from "../src/features/runs/lib/ema";

describe("emaDebiased", () => {
  it("matches a hand computation (weight 0.5)", () => {
    // s1 = 0.5·0 + 0.5·2 = 1,      out1 = 1 / (1 - 0.5)   = 2
    // s2 = 0.5·1 + 0.5·4 = 2.5,    out2 = 2.5 / (1 - 0.25) = 3.3333…
    // s3 = 0.5·2.5 + 0.5·8 = 5.25, out3 = 5.25 / (1 - 0.125) = 6
    const out = emaDebiased([2, 4, 8], 0.5);
    expect(out[0]).toBeCloseTo(2, 12);
    expect(out[1]).toBeCloseTo(10 / 3, 12);
    expect(out[2]).toBeCloseTo(6, 12);
  });

  it("starts at the first value (de-biased) and keeps a constant series constant", () => {
    expect(emaDebiased([5, 5, 5, 5], 0.9).map((v) => Number(v.toFixed(12)))).toEqual([5, 5, 5, 5]);
  });

  it("weight 0 returns the values; non-finite values pass through without entering the average", () => {
    expect(emaDebiased([1, 2, 3], 0)).toEqual([1, 2, 3]);
    const out = emaDebiased([2, Number.NaN, 4], 0.5);
    expect(out[0]).toBeCloseTo(2, 12);
    expect(out[1]).toBeNaN();
    expect(out[2]).toBeCloseTo(10 / 3, 12);
  });

  it("refuses a weight outside [0, 1)", () => {
    expect(() => emaDebiased([1], 1)).toThrow(/\[0, 1\)/);
    expect(() => emaDebiased([1], -0.1)).toThrow(/smoothing weight/);
  });
});
