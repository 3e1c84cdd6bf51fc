import { z } from "zod";

/**
 * The GPU timeline of a run (issue 31): per step, which model was resident on each device in each phase,
 * and the offload/reload moves between them with bytes and seconds. Built from events the runtime already
 * writes: `memory` (one per phase and device, some per actor) marks a phase slot; `offload` moves change
 * which actors are resident. Pure, so it is tested on made-up event streams.
 */

export const TimelineSample = z.object({ seq: z.number().int(), step: z.number().int(), phase: z.string(), device: z.string(), actor: z.string().nullable() });
export type TimelineSample = z.infer<typeof TimelineSample>;

export const TimelineMove = z.object({
  seq: z.number().int(),
  step: z.number().int(),
  actor: z.string(),
  direction: z.enum(["offload", "reload"]),
  parts: z.array(z.string()).nullable(),
  phase: z.string().nullable(),
  bytes: z.number(),
  seconds: z.number(),
});
export type TimelineMove = z.infer<typeof TimelineMove>;

export const TimelineSlot = z.object({
  phase: z.string(),
  /** The actor the phase's memory reading was for (an update is per actor), or null. */
  actor: z.string().nullable(),
  /** Actors whose training state was on this device during the slot. */
  resident: z.array(z.string()),
  moves: z.array(TimelineMove),
});
export type TimelineSlot = z.infer<typeof TimelineSlot>;

export const TimelineStep = z.object({
  step: z.number().int(),
  /** Device → its phase slots in the order they happened. */
  devices: z.record(z.string(), z.array(TimelineSlot)),
});
export type TimelineStep = z.infer<typeof TimelineStep>;

export const GpuTimeline = z.object({
  steps: z.array(TimelineStep),
  actors: z.array(z.string()),
  devices: z.array(z.string()),
  /** The run's last step with a memory reading (the window ends at or before it). */
  lastStep: z.number().int().nullable(),
});
export type GpuTimeline = z.infer<typeof GpuTimeline>;

export const slotLabel = (s: Pick<TimelineSlot, "phase" | "actor">) => (s.actor ? `${s.phase} · ${s.actor}` : s.phase);

/**
 * `residentBefore`: each actor's state before the window (from its last move before it); an actor with
 * no move before the window starts resident unless its first move in the window is a reload.
 */
export function buildTimeline(samples: TimelineSample[], moves: TimelineMove[], residentBefore: Record<string, boolean> = {}): GpuTimeline {
  const actorDevice = new Map<string, string>();
  for (const s of samples) {
    if (!s.actor) continue;
    const known = actorDevice.get(s.actor);
    if (known === undefined || (known === "cpu" && s.device !== "cpu")) actorDevice.set(s.actor, s.device);
  }
  const actors = [...new Set([...samples.flatMap((s) => (s.actor ? [s.actor] : [])), ...moves.map((m) => m.actor)])].sort();
  const resident = new Map<string, boolean>();
  for (const a of actors) {
    const first = moves.find((m) => m.actor === a);
    resident.set(a, residentBefore[a] ?? first?.direction !== "reload");
  }
  const fallbackDevice = samples.find((s) => s.device !== "cpu")?.device ?? samples[0]?.device ?? "cpu";
  const deviceOf = (a: string) => actorDevice.get(a) ?? fallbackDevice;

  type Item = { kind: "sample"; s: TimelineSample } | { kind: "move"; m: TimelineMove };
  const items: Item[] = [...samples.map((s) => ({ kind: "sample" as const, s })), ...moves.map((m) => ({ kind: "move" as const, m }))].sort(
    (x, y) => (x.kind === "sample" ? x.s.seq : x.m.seq) - (y.kind === "sample" ? y.s.seq : y.m.seq),
  );
  const steps = new Map<number, TimelineStep>();
  const slotsOf = (step: number, device: string) => {
    const entry = steps.get(step) ?? { step, devices: {} };
    steps.set(step, entry);
    return (entry.devices[device] ??= []);
  };
  const pendingReloads: TimelineMove[] = [];
  for (const item of items) {
    if (item.kind === "move") {
      const m = item.m;
      resident.set(m.actor, m.direction === "reload");
      if (m.direction === "reload") {
        pendingReloads.push(m); // shown on the slot it prepared for
        continue;
      }
      // An offload follows the phase it names: the last such slot of its step on the actor's device.
      const slots = slotsOf(m.step, deviceOf(m.actor));
      const after = [...slots].reverse().find((s) => m.phase === null || s.phase === m.phase) ?? slots.at(-1);
      if (after) after.moves.push(m);
      else slots.push({ phase: m.phase ?? "between phases", actor: null, resident: [], moves: [m] });
      continue;
    }
    const s = item.s;
    const slot: TimelineSlot = {
      phase: s.phase,
      actor: s.actor,
      resident: actors.filter((a) => resident.get(a) && deviceOf(a) === s.device),
      moves: [],
    };
    for (let k = pendingReloads.length - 1; k >= 0; k--) {
      const m = pendingReloads[k]!;
      if (deviceOf(m.actor) === s.device && m.step === s.step) {
        slot.moves.unshift(m);
        pendingReloads.splice(k, 1);
      }
    }
    slotsOf(s.step, s.device).push(slot);
  }
  for (const m of pendingReloads) slotsOf(m.step, deviceOf(m.actor)).push({ phase: m.phase ?? "between phases", actor: null, resident: [], moves: [m] });
  const ordered = [...steps.values()].sort((a, b) => a.step - b.step);
  return {
    steps: ordered,
    actors,
    devices: [...new Set(ordered.flatMap((s) => Object.keys(s.devices)))].sort(),
    lastStep: samples.length ? Math.max(...samples.map((s) => s.step)) : null,
  };
}
