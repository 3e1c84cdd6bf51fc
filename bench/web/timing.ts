/**
 * The timing helpers the web benchmarks share: percentiles of samples, and one warmed, repeated
 * measurement of an async call (its median), so every benchmark times and reports the same way.
 */

/** The p-quantile (0..1) of the samples: the sorted sample at floor(p × n), the last one at most. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error("percentile of no samples");
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

export const median = (samples: readonly number[]): number => percentile(samples, 0.5);

export interface Timed {
  label: string;
  /** Median wall time of one call, in milliseconds. */
  ms: number;
  /** What the last call returned (rows, points): shows that each variant did the work asked of it. */
  rows: number;
}

/**
 * Calls `fn` once to warm up (plans cached, pages in shared buffers, as on a server in use), then
 * `repeats` times, and returns the median time. The label goes to stderr first, to show progress.
 */
export async function timeMedian(label: string, repeats: number, fn: () => Promise<number>): Promise<Timed> {
  process.stderr.write(`${label}\n`);
  await fn();
  const samples: number[] = [];
  let rows = 0;
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    rows = await fn();
    samples.push(performance.now() - start);
  }
  return { label, ms: median(samples), rows };
}

/** A Markdown table of the measurements, each with its ratio to the baseline (`baseline ÷ this`). */
export function ratioTable(results: readonly Timed[], baseline: Timed, columns: { rows: string; ratio: string }): string {
  return [
    `| query | median ms | ${columns.rows} | ${columns.ratio} |`,
    `| --- | ---: | ---: | ---: |`,
    ...results.map((r) => `| ${r.label} | ${r.ms.toFixed(1)} | ${r.rows} | ${(baseline.ms / r.ms).toFixed(1)}× |`),
  ].join("\n");
}
