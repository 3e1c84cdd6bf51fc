import type { ChartView } from "./metricPlot";

/** The run page's view in its query string: pure functions, shared by the page's server part and the hook. */
/** The run page's tabs; the first is the default. */
export const RUN_TABS = ["charts", "transcripts", "logs", "checkpoints", "spec"] as const;
export type RunTab = (typeof RUN_TABS)[number];

export type StepRange = { from: number; to: number };

export interface RunViewState<Tab extends string = string> {
  /** The open tab; the first of the page's tabs is the default. */
  tab: Tab;
  view: ChartView;
  zoom: StepRange | null;
}

export const DEFAULT_VIEW: ChartView = { x: "step", log: false, smoothing: 0, ignoreOutliers: false };

/** Reads the run page's view from its query string; anything malformed falls back to the default. */
export function parseRunView<Tab extends string>(params: URLSearchParams, tabs: readonly Tab[]): RunViewState<Tab> {
  const tab = tabs.find((t) => t === params.get("tab")) ?? tabs[0]!;
  const smoothing = Number(params.get("smooth") ?? 0);
  const from = Number(params.get("from"));
  const to = Number(params.get("to"));
  const zoomed = params.has("from") && params.has("to") && Number.isInteger(from) && Number.isInteger(to) && from >= 0 && to > from;
  return {
    tab,
    view: {
      x: params.get("x") === "time" ? "time" : "step",
      log: params.get("log") === "1",
      smoothing: Number.isFinite(smoothing) && smoothing >= 0 && smoothing < 1 ? smoothing : 0,
      ignoreOutliers: params.get("outliers") === "ignore",
    },
    zoom: zoomed ? { from, to } : null,
  };
}

/** The query string for a view: defaults are left out, so a plain run link stays plain. */
export function runViewQuery(state: RunViewState, base: URLSearchParams, defaultTab: string): string {
  const next = new URLSearchParams(base.toString());
  const set = (k: string, v: string | null) => (v === null ? next.delete(k) : next.set(k, v));
  set("tab", state.tab === defaultTab ? null : state.tab);
  set("x", state.view.x === DEFAULT_VIEW.x ? null : state.view.x);
  set("log", state.view.log ? "1" : null);
  set("smooth", state.view.smoothing > 0 ? String(state.view.smoothing) : null);
  set("outliers", state.view.ignoreOutliers ? "ignore" : null);
  set("from", state.zoom ? String(state.zoom.from) : null);
  set("to", state.zoom ? String(state.zoom.to) : null);
  return next.toString();
}
