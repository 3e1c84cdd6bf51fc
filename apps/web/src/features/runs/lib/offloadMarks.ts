import type { OffloadEvent } from "@troupe/contracts";
import { formatBytes } from "../../../lib/format";
import type { PlotMarker, TooltipLine } from "../components/charts/CanvasPlot";
import type { OffloadMarker, OffloadTotal, RunOffloads } from "../server/offloads";
import { totalsOf } from "./offloadBuckets";
import { actorColour } from "./specNames";

/**
 * Offload / reload moves on the memory timeline: the stored ones (run.offloads) followed by those that
 * arrived live since, each drawn as a triangle above the lines at its step (▼ offload: device to host,
 * ▲ reload: host to device) in its actor's colour, and told in the tooltip with bytes and seconds.
 */

/** Stored markers, then live moves the stored answer did not cover yet (a higher seq). */
export function mergeOffloads(stored: RunOffloads | undefined, live: Iterable<OffloadEvent>): OffloadMarker[] {
  const markers = [...(stored?.markers ?? [])];
  const covered = Math.max(-1, ...markers.map((m) => m.seq));
  const fresh = [...live].filter((e) => e.seq > covered).sort((a, b) => a.seq - b.seq);
  for (const e of fresh) {
    markers.push({ actor: e.actor, direction: e.direction, firstStep: e.step, lastStep: e.step, count: 1, bytes: e.bytes, seconds: e.seconds, parts: e.parts ?? null, phase: e.phase ?? null, seq: e.seq });
  }
  return markers;
}

/** The stored totals plus the live moves they do not cover yet, so the table needs no polling. */
export function mergeTotals(stored: RunOffloads | undefined, live: Iterable<OffloadEvent>): OffloadTotal[] {
  const covered = Math.max(-1, ...(stored?.markers ?? []).map((m) => m.seq));
  const asMarkers = (stored?.totals ?? []).map((t) => ({ ...t, parts: null, phase: null, seq: covered }));
  const fresh = mergeOffloads(undefined, [...live].filter((e) => e.seq > covered));
  return totalsOf([...asMarkers, ...fresh]);
}

/** Where a marker is drawn: at the last step it covers (a bucket's step, as the memory series' buckets). */
export const markerStep = (m: OffloadMarker) => m.lastStep;

/** Actors in a stable order: the spec's first, then any other by name. */
function actorOrder(markers: readonly OffloadMarker[], specActors: readonly string[]): string[] {
  const seen = [...new Set(markers.map((m) => m.actor))];
  return [...specActors.filter((a) => seen.includes(a)), ...seen.filter((a) => !specActors.includes(a)).sort()];
}

/** One triangle per marker; each actor has its own row (offloads, then reloads), so moves at one step never overlap. */
export function plotMarkers(markers: readonly OffloadMarker[], specActors: readonly string[]): PlotMarker[] {
  const order = actorOrder(markers, specActors);
  return markers.map((m) => ({
    x: markerStep(m),
    colour: actorColour(specActors, m.actor),
    up: m.direction === "reload",
    row: order.indexOf(m.actor) * 2 + (m.direction === "reload" ? 1 : 0),
  }));
}

const seconds = (s: number) => (s < 10 ? `${s.toFixed(3)} s` : `${s.toFixed(1)} s`);

/** What a move (or a bucket of moves) was, for the tooltip. */
export function describeMarker(m: OffloadMarker): string {
  const what = m.direction === "offload" ? "offload" : "reload";
  if (m.count === 1) {
    const parts = m.parts ? ` ${m.parts.join(" + ")}` : "";
    const phase = m.phase ? ` (${m.direction === "offload" ? "after" : "for"} ${m.phase})` : "";
    return `${what} ${m.actor}${parts}${phase}: ${formatBytes(m.bytes)} in ${seconds(m.seconds)}`;
  }
  return `${m.count} ${what}s of ${m.actor}, steps ${m.firstStep}–${m.lastStep}: ${formatBytes(m.bytes)} in ${seconds(m.seconds)}`;
}

/** Tooltip lines for the moves drawn at `step`. */
export function markerTooltip(markers: readonly OffloadMarker[], step: number, specActors: readonly string[]): TooltipLine[] {
  return markers
    .filter((m) => markerStep(m) === step)
    .map((m) => ({ label: describeMarker(m), value: m.direction === "offload" ? "▼" : "▲", colour: actorColour(specActors, m.actor) }));
}
