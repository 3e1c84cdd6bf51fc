"use client";

import { useSearchParams } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import type { ChartView } from "../components/charts/MetricChart";

export type StepRange = { from: number; to: number };

export interface RunViewState<Tab extends string = string> {
  /** The open tab; the first of the page's tabs is the default. */
  tab: Tab;
  view: ChartView;
  zoom: StepRange | null;
}

const DEFAULT_VIEW: ChartView = { x: "step", log: false, smoothing: 0 };

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
  set("from", state.zoom ? String(state.zoom.from) : null);
  set("to", state.zoom ? String(state.zoom.to) : null);
  return next.toString();
}

// A smoothing slider fires an event per pixel; browsers throttle history updates past ~100 per 10 s.
const URL_WRITE_DELAY_MS = 150;

/**
 * The run page's tab, chart view (x-axis, log scale, smoothing) and zoomed step range, kept in the
 * URL so a zoomed view can be shared or reloaded. State lives in React (read from the URL once) and
 * is written back with `history.replaceState`, which Next's router picks up without a server round
 * trip and without adding a back-button entry per slider move.
 */
export function useRunViewParams<Tab extends string>(tabs: readonly Tab[]) {
  const params = useSearchParams();
  const [state, setState] = useState<RunViewState<Tab>>(() => parseRunView(new URLSearchParams(params.toString()), tabs));
  const first = useRef(true);

  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const timer = setTimeout(() => {
      const query = runViewQuery(state, new URLSearchParams(window.location.search), tabs[0]!);
      const url = `${window.location.pathname}${query ? `?${query}` : ""}`;
      if (url !== `${window.location.pathname}${window.location.search}`) window.history.replaceState(null, "", url);
    }, URL_WRITE_DELAY_MS);
    return () => clearTimeout(timer);
    // `tabs` is a constant of the page, so only `state` matters.
  }, [state]);

  return {
    ...state,
    setTab: (tab: Tab) => setState((s) => ({ ...s, tab })),
    setView: (view: ChartView) => setState((s) => ({ ...s, view })),
    setZoom: (zoom: StepRange | null) => setState((s) => ({ ...s, zoom })),
  };
}
