import { describe, expect, it } from "vitest";
import { chartPrecision, fromColumns, selectMetricSeries, toColumns } from "../src/features/runs/lib/seriesColumns";
import { MetricColumns, type MetricSeries } from "../src/features/runs/server/schemas";

const series = (points: MetricSeries["points"], bucketed = false): MetricSeries => ({ name: "loss", actor: "alice", total: points.length, bucketed, points });

describe("the charts' wire form of a series (columns)", () => {
  it("sends one array per field, leaves out min/max when every bucket held one point, and reads back the same points", () => {
    const s = series([
      { step: 1, value: 0.5, min: 0.5, max: 0.5, ts: 1000 },
      { step: 2, value: 0.25, min: 0.25, max: 0.25, ts: 2000 },
    ]);
    const c = toColumns(s);
    expect(c).toEqual({ name: "loss", actor: "alice", total: 2, bucketed: false, step: [1, 2], value: [0.5, 0.25], ts: [1000, 2000] });
    expect(MetricColumns.parse(c)).toEqual(c);
    expect(fromColumns(c)).toEqual(s);
  });

  it("keeps min and max where a bucket spread, and leaves out times unless every point has one", () => {
    const s = series(
      [
        { step: 10, value: 1, min: -3, max: 7 },
        { step: 20, value: 2, min: 2, max: 2 },
      ],
      true,
    );
    const c = toColumns(s);
    expect(c).toMatchObject({ min: [-3, 2], max: [7, 2] });
    expect(c.ts).toBeUndefined();
    expect(fromColumns(c)).toEqual(s);
  });

  it("carries 7 significant digits, what a float32 holds", () => {
    expect(chartPrecision(0.30000001192092896)).toBe(0.3);
    expect(chartPrecision(-0.5283440009070359)).toBe(-0.528344);
    expect(chartPrecision(3.0000001e-6)).toBe(3e-6);
    expect(chartPrecision(123456789)).toBe(123456800);
    expect(chartPrecision(0)).toBe(0);
    const c = toColumns(series([{ step: 1, value: 1 / 3, min: 1 / 7, max: 2 / 3 }]));
    expect([c.value[0], c.min?.[0], c.max?.[0]]).toEqual([0.3333333, 0.1428571, 0.6666667]);
  });

  it("a bucketed run-page series (276 buckets of float64 noise, with times) takes under half the bytes of the per-point JSON", () => {
    let x = 7;
    const noise = () => ((x = (x * 48271) % 2147483647) / 2147483647) * 2 - 1;
    const points = Array.from({ length: 276 }, (_, i) => {
      const value = noise();
      return { step: 3623 * (i + 1), value, min: value - Math.abs(noise()), max: value + Math.abs(noise()), ts: 1_735_689_600_000 + 3_623_000 * (i + 1) };
    });
    const perPoint = JSON.stringify(series(points, true)).length;
    const columns = JSON.stringify(toColumns(series(points, true))).length;
    expect(columns / perPoint).toBeLessThan(0.5);
  });

  it("the query's select turns every series back into points", () => {
    const s = series([{ step: 3, value: 2, min: 1, max: 4 }]);
    expect(selectMetricSeries({ series: [toColumns(s)] })).toEqual([s]);
  });

  it("rejects columns of different lengths", () => {
    const bad = { ...toColumns(series([{ step: 1, value: 1, min: 1, max: 1 }])), value: [1, 2] };
    expect(() => MetricColumns.parse(bad)).toThrow(/one entry per step/);
  });
});
