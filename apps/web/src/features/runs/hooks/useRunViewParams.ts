"use client";

import { useSearchParams } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import type { ChartView } from "../lib/metricPlot";
import { parseRunView, runViewQuery, type RunViewState, type StepRange } from "../lib/runView";

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
