import type { ActorMemory, BackendName } from "./actorMemory";

/**
 * Memory per device and phase, as the runtime's residency manager arranges it (residency.py):
 *  - rollout: every sampling actor's parameters are on its device; everything else that may be offloaded
 *    waits on the host. Then the sampling transients: fsdp2's gathered parameters for every fsdp2 actor,
 *    and the larger of the samplers' KV cache + logits (actors generate one after another).
 *  - update of X: X's parameters, gradients and optimizer state and its KL reference on the device; every
 *    other part that may be offloaded on the host; then X's update transient (its gradients are rebuilt,
 *    not added: `ActorMemory.update`).
 *  - reference of X (KL penalty): as for X's update, with X's previous gradients still there, plus the
 *    reference forward.
 * A part "may be offloaded" when between-phase offload is on (`trainer.offloadBetweenPhases`; by default
 * when two or more local models share a GPU), or for a torch actor's own `offload.params` /
 * `offload.optimizer`. LoRA actors sharing a base never move their parameters. Gradients move with the
 * parameters. On a CPU-only run host and device are the same memory: nothing moved is freed, so every
 * part counts in every phase.
 * Phases and actors are named as the runtime's `memory` events name them (rollout: no actor).
 */

export type EstimatedPhase = "rollout" | "reference" | "update";

export interface PlacedActor {
  name: string;
  /** Where its state lives: `cuda:<i>` (one per GPU of its placement) or `cpu`. */
  devices: string[];
  memory: ActorMemory;
  trainable: boolean;
  /** Samples in the run's environments (its parameters are wanted for the rollout). */
  samples: boolean;
  /** On a LoRA base shared with another actor (owner or not). */
  sharedBase: boolean;
  backend: BackendName;
  offloadParams: boolean;
  offloadOptimizer: boolean;
}

export interface PhaseActorLoad {
  actor: string;
  /** State on the device during this phase. */
  resident: number;
  /** What exists only while the phase runs. */
  transient: number;
}

export interface PhaseLoad {
  device: string;
  phase: EstimatedPhase;
  /** The actor the phase belongs to ("" for the rollout), as in memory events. */
  actor: string;
  total: number;
  actors: PhaseActorLoad[];
}

export interface PhaseMemoryOptions {
  /** The run trains on the CPU: host and device are one memory. */
  hostIsDevice: boolean;
  /** `trainer.offloadBetweenPhases` as given (undefined: the runtime's default). */
  offloadBetweenPhases?: boolean;
}

/** The runtime's default (residency.offload_between_phases): on when two or more local models share a GPU. */
export function betweenPhases(actors: readonly PlacedActor[], options: PhaseMemoryOptions): boolean {
  if (options.offloadBetweenPhases !== undefined) return options.offloadBetweenPhases;
  const count = new Map<string, number>();
  for (const a of actors) {
    const d = a.devices[0] ?? "cpu";
    count.set(d, (count.get(d) ?? 0) + 1);
  }
  return [...count].some(([d, k]) => !d.startsWith("cpu") && k > 1);
}

type Arrangement = { kind: "rollout" } | { kind: "update"; actor: string };

/** Bytes of `a` on its device under an arrangement, with or without its gradients. */
function residentBytes(a: PlacedActor, arrangement: Arrangement, between: boolean, hostIsDevice: boolean): { total: number; gradients: number } {
  const m = a.memory;
  if (hostIsDevice) return { total: m.parameters + m.gradients + m.optimizer + m.referenceModel, gradients: m.gradients };
  const active = arrangement.kind === "update" && arrangement.actor === a.name;
  const wantParams = arrangement.kind === "rollout" ? a.samples : active;
  const paramsMayMove = !a.sharedBase && (between || (a.trainable && a.backend === "torch" && a.offloadParams));
  const optimizerMayMove = between || (a.backend === "torch" && a.offloadOptimizer);
  const paramsHere = !m.hostOnly.parameters && (wantParams || !paramsMayMove);
  const optimizerHere = !m.hostOnly.optimizer && (active || !optimizerMayMove);
  const referenceHere = active || !between;
  const gradients = paramsHere ? m.gradients : 0;
  return {
    total: (paramsHere ? m.parameters : 0) + gradients + (optimizerHere ? m.optimizer : 0) + (referenceHere ? m.referenceModel : 0),
    gradients,
  };
}

export function phaseLoads(actors: readonly PlacedActor[], options: PhaseMemoryOptions): PhaseLoad[] {
  const between = betweenPhases(actors, options);
  const devices = [...new Set(actors.flatMap((a) => a.devices))].sort();
  const out: PhaseLoad[] = [];
  for (const device of devices) {
    const here = actors.filter((a) => a.devices.includes(device));
    // rollout
    const rolloutLoads = here.map((a) => ({ actor: a.name, resident: residentBytes(a, { kind: "rollout" }, between, options.hostIsDevice).total, transient: 0 }));
    const sampler = here.filter((a) => a.samples).reduce<PlacedActor | null>((best, a) => (best && best.memory.kvCache + best.memory.samplingLogits >= a.memory.kvCache + a.memory.samplingLogits ? best : a), null);
    for (const load of rolloutLoads) {
      const a = here.find((x) => x.name === load.actor)!;
      load.transient = (a.samples ? a.memory.gatheredParameters : 0) + (a === sampler ? a.memory.kvCache + a.memory.samplingLogits : 0);
    }
    out.push(phaseRow(device, "rollout", "", rolloutLoads));
    // per trainable actor: its reference (KL) and its update
    for (const x of actors.filter((a) => a.trainable)) {
      const arrangement: Arrangement = { kind: "update", actor: x.name };
      const resident = here.map((a) => ({ a, ...residentBytes(a, arrangement, between, options.hostIsDevice) }));
      const own = x.devices.includes(device);
      if (x.memory.reference > 0) {
        out.push(phaseRow(device, "reference", x.name, resident.map((r) => ({ actor: r.a.name, resident: r.total, transient: own && r.a === x ? x.memory.reference : 0 }))));
      }
      out.push(
        phaseRow(
          device,
          "update",
          x.name,
          resident.map((r) => (own && r.a === x ? { actor: r.a.name, resident: r.total - r.gradients, transient: x.memory.update } : { actor: r.a.name, resident: r.total, transient: 0 })),
        ),
      );
    }
  }
  return out;
}

function phaseRow(device: string, phase: EstimatedPhase, actor: string, actors: PhaseActorLoad[]): PhaseLoad {
  return { device, phase, actor, actors, total: actors.reduce((s, a) => s + a.resident + a.transient, 0) };
}

export interface DeviceLoad {
  device: string;
  /** The highest phase total on this device. */
  total: number;
  /** The phase (and actor) it comes from. */
  phase: EstimatedPhase;
  phaseActor: string;
  actors: string[];
  fits: boolean;
  /** Between-phase offload applies: the total is one phase's, not every actor's state at once. */
  offloaded: boolean;
}

/** Per device: the worst phase, and whether it fits in `capacityBytes` (one GPU's memory). */
export function deviceLoads(actors: readonly PlacedActor[], phases: readonly PhaseLoad[], capacityBytes: number, options: PhaseMemoryOptions): DeviceLoad[] {
  const between = betweenPhases(actors, options);
  const out: DeviceLoad[] = [];
  for (const device of [...new Set(phases.map((p) => p.device))]) {
    const worst = phases.filter((p) => p.device === device).reduce((a, b) => (b.total > a.total ? b : a));
    out.push({
      device,
      total: worst.total,
      phase: worst.phase,
      phaseActor: worst.actor,
      actors: actors.filter((a) => a.devices.includes(device)).map((a) => a.name),
      fits: worst.total <= capacityBytes,
      offloaded: between && !options.hostIsDevice,
    });
  }
  return out;
}

export const GIB = 1024 ** 3;
