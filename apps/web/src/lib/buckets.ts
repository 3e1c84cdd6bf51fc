/**
 * Downsampling of a step series into at most `maxPoints` buckets over the step range, keeping
 * each bucket's last value (at its highest step) and its min and max. The server does the same in
 * SQL (`features/runs/server/series.ts`); the formula is shared so both place a step in the same bucket.
 */

export interface BucketedPoint {
  step: number;
  value: number;
  min: number;
  max: number;
}

/** Bucket index of `step` when [lo, hi] is cut into `buckets` equal step ranges. */
export function bucketOf(step: number, lo: number, hi: number, buckets: number): number {
  return Math.floor(((step - lo) * buckets) / (hi - lo + 1));
}

/** `points` must be sorted by step, one per step. Returns them unchanged when short enough. */
export function bucketByStep(points: readonly BucketedPoint[], maxPoints: number): BucketedPoint[] {
  if (points.length <= maxPoints) return [...points];
  const lo = points[0]!.step;
  const hi = points[points.length - 1]!.step;
  const out: BucketedPoint[] = [];
  let current = -1;
  for (const p of points) {
    const b = bucketOf(p.step, lo, hi, maxPoints);
    const last = out[out.length - 1];
    if (b !== current || !last) {
      out.push({ ...p });
      current = b;
    } else {
      last.step = p.step;
      last.value = p.value;
      last.min = Math.min(last.min, p.min);
      last.max = Math.max(last.max, p.max);
    }
  }
  return out;
}
