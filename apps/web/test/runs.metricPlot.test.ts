import { describe, expect, it } from "vitest";
import { memoryPlot } from "../src/features/runs/lib/memoryPlot";
import { metricPlot, nearestStep, percentileRange, stepLabel, tickLabel, type ChartView, type DrawnSeries } from "../src/features/runs/lib/metricPlot";

const STEP: ChartView = { x: "step", log: false, smoothing: 0, ignoreOutliers: false };
const point = (step: number, value: number, min = value, max = value, ts?: number) => ({ step, value, min, max, ...(ts === undefined ? {} : { ts }) });

describe("a metric chart's columns (what the canvas draws)", () => {
  it("aligns two actors' points on one x array, leaving gaps where an actor has no point", () => {
    const series: DrawnSeries[] = [
      { actor: "alice", label: "alice", colour: "#2456c7", points: [point(1, 0.1), point(2, 0.2), point(4, 0.4)] },
      { actor: "bob", label: "bob", colour: "#c2410c", points: [point(2, 1), point(3, 2)] },
    ];
    const plot = metricPlot(series, STEP, null);
    expect(plot.data).toEqual([
      [1, 2, 3, 4],
      [0.1, 0.2, null, 0.4],
      [null, 1, 2, null],
    ]);
    expect(plot.series.map((s) => [s.label, s.width])).toEqual([
      ["alice", 1.75],
      ["bob", 1.75],
    ]);
    // Two points: the line alone would be hard to see, so they are marked.
    expect(plot.series[1]!.dots).toBe(true);
    expect(plot.bands).toEqual([]);
    expect(plot.tooltip(2)).toEqual([{ label: "step 3" }, { label: "bob", value: "2", colour: "#c2410c" }]);
  });

  it("draws the min–max range of a bucket (a spike inside it stays visible) and the ± std band as fills between edge columns", () => {
    const series: DrawnSeries[] = [
      {
        actor: "",
        label: "reward/mean",
        colour: "#2456c7",
        // Binary fractions, so the band's sums are exact.
        points: [point(0, 0.5), point(10, 0.75, 0.25, 3), point(20, 1)],
        band: [point(0, 0.25), point(10, 0.125), point(20, 0.5)],
      },
    ];
    const plot = metricPlot(series, STEP, null);
    // Band edges (upper, lower), range edges (upper, lower), then the line.
    expect(plot.data.slice(1)).toEqual([
      [0.75, 0.875, 1.5],
      [0.25, 0.625, 0.5],
      [0.5, 3, 1],
      [0.5, 0.25, 1],
      [0.5, 0.75, 1],
    ]);
    expect(plot.series.map((s) => s.width)).toEqual([0, 0, 0, 0, 1.75]);
    expect(plot.bands).toEqual([
      { upper: 0, lower: 1, colour: "#2456c7", alpha: 0.12 },
      { upper: 2, lower: 3, colour: "#2456c7", alpha: 0.22 },
    ]);
    expect(plot.tooltip(1).map((l) => [l.label, l.value])).toEqual([
      ["step 10", undefined],
      ["reward/mean", "0.75 ± 0.125 (0.25 … 3)"],
    ]);
  });

  it("on a log scale draws no bands and leaves out values at or below zero", () => {
    const series: DrawnSeries[] = [
      { actor: "", label: "loss", colour: "#2456c7", points: [point(1, 2, 1, 3), point(2, 0), point(3, -1), point(4, 0.5)], band: [point(1, 0.1)] },
    ];
    const plot = metricPlot(series, { ...STEP, log: true }, null);
    expect(plot.data).toEqual([
      [1, 2, 3, 4],
      [2, null, null, 0.5],
    ]);
    expect(plot.bands).toEqual([]);
  });

  it("with smoothing draws the de-biased EMA over the raw line, which goes faint", () => {
    const series: DrawnSeries[] = [{ actor: "", label: "kl", colour: "#2456c7", points: [point(1, 0), point(2, 1), point(3, 1)] }];
    const plot = metricPlot(series, { ...STEP, smoothing: 0.5 }, null);
    expect(plot.series.map((s) => [s.label, s.alpha ?? 1, s.width])).toEqual([
      ["kl (raw)", 0.25, 1],
      ["kl", 1, 2],
    ]);
    expect(plot.data[1]).toEqual([0, 1, 1]);
    // EMA with weight 0.5, divided by 1 - 0.5^n: 0, 2/3, 6/7.
    const smooth = plot.data[2]!;
    expect(smooth[0]).toBe(0);
    expect(smooth[1]).toBeCloseTo(2 / 3, 12);
    expect(smooth[2]).toBeCloseTo(6 / 7, 12);
    // The tooltip reports the line the reader follows: the smoothed one.
    expect(plot.tooltip(1)[1]).toMatchObject({ label: "kl", value: "0.667" });
  });

  it("on the time axis puts points at seconds since the run started and keeps their steps for zoom", () => {
    const t0 = Date.UTC(2026, 0, 1);
    const series: DrawnSeries[] = [{ actor: "", label: "lr", colour: "#2456c7", points: [point(5, 1, 1, 1, t0 + 2000), point(6, 1, 1, 1, t0 + 65_000)] }];
    const plot = metricPlot(series, { ...STEP, x: "time" }, t0);
    expect(plot.data[0]).toEqual([2, 65]);
    expect(plot.steps).toEqual([5, 6]);
    expect(plot.tooltip(1)[0]!.label).toBe("t+1m 05s · step 6");
    // A drag from 1 s to 40 s on the time axis zooms to steps 5–6.
    expect(nearestStep(plot.data[0], plot.steps, 1)).toBe(5);
    expect(nearestStep(plot.data[0], plot.steps, 40)).toBe(6);
  });

  it("ignoring outliers scales y to the lines' 1st–99th percentile (padded), so one spike does not flatten the rest", () => {
    // 100 points around 1, one spike to 1000 (and a bucket's max to 5000, which is band, not line).
    const points = Array.from({ length: 100 }, (_, i) => point(i + 1, i === 50 ? 1000 : 1 + (i % 10) / 100, 1, i === 60 ? 5000 : 1.1));
    const series: DrawnSeries[] = [{ actor: "", label: "grad_norm", colour: "#2456c7", points }];
    expect(metricPlot(series, STEP, null).yRange).toBeNull();
    const [lo, hi] = metricPlot(series, { ...STEP, ignoreOutliers: true }, null).yRange!;
    expect(lo).toBeCloseTo(1 - 0.009, 12);
    expect(hi).toBeCloseTo(1.09 + 0.009, 12);
    // A log scale fits everything (its ticks are decades: a spike does not flatten it).
    expect(metricPlot(series, { ...STEP, ignoreOutliers: true, log: true }, null).yRange).toBeNull();
  });

  it("calls nothing an outlier in fewer than 20 values, or when the percentiles already hold them all", () => {
    expect(percentileRange([1, 2, 1000])).toBeNull();
    expect(percentileRange(Array.from({ length: 19 }, (_, i) => (i === 0 ? 1e6 : i)))).toBeNull();
    expect(percentileRange(Array.from({ length: 20 }, () => 3))).toBeNull();
    expect(percentileRange(Array.from({ length: 200 }, (_, i) => (i === 0 ? -1e6 : 5)))).toEqual([4.5, 5.5]);
  });

  it("finds the nearest step by binary search, ties going to the earlier one", () => {
    const xs = [0, 10, 20, 30];
    const steps = [100, 110, 120, 130];
    expect(nearestStep(xs, steps, -5)).toBe(100);
    expect(nearestStep(xs, steps, 14)).toBe(110);
    expect(nearestStep(xs, steps, 15)).toBe(110);
    expect(nearestStep(xs, steps, 16)).toBe(120);
    expect(nearestStep(xs, steps, 99)).toBe(130);
    expect(nearestStep([], [], 3)).toBeUndefined();
  });

  it("labels ticks briefly: steps as 250k and 1.2M, values with three significant digits", () => {
    expect([stepLabel(9999), stepLabel(25_000), stepLabel(250_000), stepLabel(1_234_567)]).toEqual(["9999", "25k", "250k", "1.23M"]);
    expect([tickLabel(0), tickLabel(0.0025), tickLabel(0.005), tickLabel(123456), tickLabel(0.0001)]).toEqual(["0", "0.0025", "0.005", "1.2e+5", "1.0e-4"]);
  });
});

describe("a memory chart's columns", () => {
  it("gives each phase its column in MiB and its phase colour, and the tooltip names what was at the step", () => {
    const plot = memoryPlot({
      series: [
        { key: "rollout", phase: "rollout", actor: "", label: "rollout", samples: 2 },
        { key: "update:alice", phase: "update", actor: "alice", label: "update (alice)", samples: 5 },
      ],
      rows: [
        { step: 1, rollout: 100, "update:alice": 300 },
        { step: 2, "update:alice": 310.25 },
      ],
      points: 3,
      peakBytes: 310.25 * 2 ** 20,
    });
    expect(plot.data).toEqual([
      [1, 2],
      [100, null],
      [300, 310.25],
    ]);
    expect(plot.series.map((s) => [s.colour, s.dots])).toEqual([
      ["#2456c7", true],
      ["#c2410c", false],
    ]);
    expect(plot.unit).toBe("MiB");
    expect(plot.tooltip(1)).toEqual([{ label: "step 2" }, { label: "update (alice)", value: "310 MiB", colour: "#c2410c" }]);
  });

  it("tells two actors' lines of one phase apart by dash: the first actor solid, the next dashed", () => {
    const data = {
      series: [
        { key: "rollout:bob", phase: "rollout", actor: "bob", label: "rollout (bob)", samples: 5 },
        { key: "rollout:alice", phase: "rollout", actor: "alice", label: "rollout (alice)", samples: 5 },
        { key: "setup", phase: "setup", actor: "", label: "setup", samples: 1 },
      ],
      rows: [{ step: 1, "rollout:bob": 1, "rollout:alice": 2, setup: 3 }],
      points: 3,
      peakBytes: 3 * 2 ** 20,
    };
    const plot = memoryPlot(data);
    expect(plot.series.map((s) => [s.label, s.colour, s.dash])).toEqual([
      ["rollout (bob)", "#2456c7", [6, 3]],
      ["rollout (alice)", "#2456c7", undefined],
      ["setup", "#6b7280", undefined],
    ]);
    // A line hidden from the legend leaves the chart and its tooltip; bob's line keeps its dash.
    const without = memoryPlot(data, new Set(["rollout:alice"]));
    expect(without.series.map((s) => [s.label, s.dash])).toEqual([
      ["rollout (bob)", [6, 3]],
      ["setup", undefined],
    ]);
    expect(without.data).toEqual([[1], [1], [3]]);
    expect(without.tooltip(0).map((l) => l.label)).toEqual(["step 1", "rollout (bob)", "setup"]);
  });

  it("switches the axis to GiB once a value reaches 1 GiB, the tooltip naming each value in its own unit", () => {
    const plot = memoryPlot({
      series: [{ key: "update", phase: "update", actor: "", label: "update", samples: 2 }],
      rows: [
        { step: 1, update: 512 },
        { step: 2, update: 40_000 },
      ],
      points: 2,
      peakBytes: 40_000 * 2 ** 20,
    });
    expect(plot.unit).toBe("GiB");
    expect(plot.data).toEqual([[1, 2], [0.5, 40_000 / 1024]]);
    expect(plot.tooltip(0)[1]!.value).toBe("512 MiB");
    expect(plot.tooltip(1)[1]!.value).toBe("39.1 GiB");
  });
});
