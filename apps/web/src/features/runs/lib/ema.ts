/**
 * De-biased exponential moving average (as in Adam's bias correction, and W&B's "EMA" smoothing):
 *   s_0 = 0,  s_i = w·s_{i-1} + (1-w)·x_i,  out_i = s_i / (1 - w^i)   (i counts from 1)
 * Without the correction the first points would be pulled towards 0. `weight` 0 returns the values;
 * non-finite values are passed through and do not enter the average.
 */
export function emaDebiased(values: readonly number[], weight: number): number[] {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`smoothing weight must be in [0, 1), got ${weight}`);
  if (weight === 0) return [...values];
  const out: number[] = [];
  let s = 0;
  let n = 0;
  for (const x of values) {
    if (!Number.isFinite(x)) {
      out.push(x);
      continue;
    }
    n += 1;
    s = weight * s + (1 - weight) * x;
    out.push(s / (1 - weight ** n));
  }
  return out;
}
