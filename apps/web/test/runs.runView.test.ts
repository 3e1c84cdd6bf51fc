import { describe, expect, it } from "vitest";
import { DEFAULT_VIEW, parseRunView, RUN_TABS, runViewQuery } from "../src/features/runs/lib/runView";

describe("the run page's view in its URL", () => {
  it("reads every option and writes it back, leaving defaults out", () => {
    const query = "tab=logs&x=time&log=1&smooth=0.6&outliers=ignore&from=100&to=300";
    const state = parseRunView(new URLSearchParams(query), RUN_TABS);
    expect(state).toEqual({ tab: "logs", view: { x: "time", log: true, smoothing: 0.6, ignoreOutliers: true }, zoom: { from: 100, to: 300 } });
    expect(runViewQuery(state, new URLSearchParams(), RUN_TABS[0])).toBe(query);
    expect(runViewQuery({ tab: "charts", view: DEFAULT_VIEW, zoom: null }, new URLSearchParams("other=1"), RUN_TABS[0])).toBe("other=1");
  });

  it("falls back to the default for anything malformed", () => {
    const state = parseRunView(new URLSearchParams("tab=nope&x=sideways&smooth=2&outliers=yes&from=9&to=3"), RUN_TABS);
    expect(state).toEqual({ tab: "charts", view: DEFAULT_VIEW, zoom: null });
  });
});
