"use client";

import { useEffect, useState, type RefObject } from "react";

/**
 * Width of an element in CSS pixels, rounded to `quantum` so small resizes don't refetch charts.
 * A hidden element (another tab is open: `display: none`, width 0) keeps its last width: charts stay
 * mounted behind other tabs, and would otherwise be resized to nothing and asked for again.
 */
export function useElementWidth(ref: RefObject<HTMLElement | null>, quantum = 100): number | null {
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => {
      if (el.clientWidth === 0) return;
      setWidth(Math.max(quantum, Math.round(el.clientWidth / quantum) * quantum));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref, quantum]);
  return width;
}
