import { describe, expect, it } from "vitest";
import {
  chartPointsFor,
  chartPointsFromCookie,
  DEFAULT_CHART_POINTS,
  metricsQueryInput,
  storedMetricNames,
} from "../src/features/runs/lib/seriesRequest";

describe("the run page's series request (shared by the server's prefetch and the browser)", () => {
  it("reads the remembered chart width from its cookie, falling back to the default for anything malformed", () => {
    expect(chartPointsFromCookie("312")).toBe(312);
    expect(chartPointsFromCookie(undefined)).toBe(DEFAULT_CHART_POINTS);
    expect(chartPointsFromCookie("wide")).toBe(DEFAULT_CHART_POINTS);
    expect(chartPointsFromCookie("-5")).toBe(DEFAULT_CHART_POINTS);
    // Clamped to what the server accepts.
    expect(chartPointsFromCookie("3")).toBe(100);
    expect(chartPointsFromCookie("99999")).toBe(4000);
  });

  it("keeps the fetched points for a width within 20% and follows a larger change", () => {
    expect(chartPointsFor(276, 300)).toBe(276);
    expect(chartPointsFor(276, 240)).toBe(276);
    expect(chartPointsFor(276, 358)).toBe(358);
    expect(chartPointsFor(276, 120)).toBe(120);
  });

  it("lists stored names sorted and unique, and builds the same input for the same view", () => {
    const names = storedMetricNames([{ name: "loss" }, { name: "kl" }, { name: "loss" }]);
    expect(names).toEqual(["kl", "loss"]);
    expect(metricsQueryInput("r1", names, 276, null)).toEqual({ runId: "r1", names: ["kl", "loss"], maxPoints: 276, withTime: true });
    expect(metricsQueryInput("r1", [], 276, { from: 10, to: 20 })).toEqual({
      runId: "r1",
      names: ["reward/mean"],
      maxPoints: 276,
      withTime: true,
      fromStep: 10,
      toStep: 20,
    });
  });
});
