import type { OffloadMarker, OffloadTotal } from "../server/offloads";

/** Sums of offload markers, shared by the server (run.offloads) and the page (live moves added to the stored answer). */

/** Per (actor, direction): count, bytes, seconds and step range, summed from the markers (which cover every move). */
export function totalsOf(markers: readonly OffloadMarker[]): OffloadTotal[] {
  const byKey = new Map<string, OffloadTotal>();
  for (const m of markers) {
    const key = `${m.actor}\u0000${m.direction}`;
    const t = byKey.get(key);
    if (!t) byKey.set(key, { actor: m.actor, direction: m.direction, count: m.count, bytes: m.bytes, seconds: m.seconds, firstStep: m.firstStep, lastStep: m.lastStep });
    else {
      t.count += m.count;
      t.bytes += m.bytes;
      t.seconds += m.seconds;
      t.firstStep = Math.min(t.firstStep, m.firstStep);
      t.lastStep = Math.max(t.lastStep, m.lastStep);
    }
  }
  return [...byKey.values()].sort((a, b) => (a.actor === b.actor ? a.direction.localeCompare(b.direction) : a.actor < b.actor ? -1 : 1));
}

/** Markers merged into blocks of `width` steps per actor and direction (widths are powers of two, so blocks nest). */
export function rebucket(markers: readonly OffloadMarker[], width: number): OffloadMarker[] {
  const byKey = new Map<string, OffloadMarker>();
  for (const m of markers) {
    const key = `${m.actor}\u0000${m.direction}\u0000${Math.floor(m.firstStep / width)}`;
    const b = byKey.get(key);
    if (!b) byKey.set(key, { ...m, parts: null, phase: null });
    else {
      b.count += m.count;
      b.bytes += m.bytes;
      b.seconds += m.seconds;
      b.firstStep = Math.min(b.firstStep, m.firstStep);
      b.lastStep = Math.max(b.lastStep, m.lastStep);
      b.seq = Math.max(b.seq, m.seq);
    }
  }
  return [...byKey.values()].sort((a, b) => a.lastStep - b.lastStep || a.seq - b.seq);
}
