import { cpus, hostname, totalmem } from "node:os";
import type { RunnerCapabilities, RunnerGpu } from "@troupe/contracts";
import { Prisma } from "@troupe/db";
import type { RunnerContext } from "../context";
import { errorLine } from "../io/dbRetry";
import { readGpuMemory, type GpuMemory } from "./gpuMemory";
import { probeCapabilities, type ProbeResult } from "./probeCapabilities";
import { describeTrust } from "./trustLine";

export interface Presence {
  /** Writes one beat now (tests; the timer does it every TROUPE_PRESENCE_MS). */
  beat(): Promise<void>;
  /** Stops beating and marks the runner stopped (a clean shutdown is "stopped", not "gone"). */
  stop(): Promise<void>;
}

/** Each GPU of the slots with what the probe and nvidia-smi last said about it, and the run holding it. */
export function gpuRows(
  occupancy: { index: number; runId: string | null }[],
  caps: RunnerCapabilities | null,
  memory: GpuMemory[],
): RunnerGpu[] {
  return occupancy.map(({ index, runId }) => {
    const live = memory.find((g) => g.index === index);
    const probed = caps?.gpus.find((g) => g.index === index);
    return {
      index,
      name: live?.name ?? probed?.name ?? `GPU ${index}`,
      totalBytes: live?.totalBytes ?? probed?.totalBytes ?? null,
      freeBytes: live?.freeBytes ?? probed?.freeBytes ?? null,
      runId,
    };
  });
}

/** One log line's worth: GPUs, CUDA, the installed engines with their versions, and whether user code can run. */
function describeCapabilities(caps: RunnerCapabilities): string {
  const engines = Object.entries(caps.engines)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  const sandbox = caps.sandbox.usable
    ? `sandbox ${caps.sandbox.mode ?? "usable"}`
    : `NO SANDBOX (${caps.sandbox.detail ?? "unusable"}): Python rewards, code and tools environments are refused on this runner`;
  return `${caps.gpus.length} GPU(s), CUDA ${caps.cuda ?? "none"}; ${engines}; ${sandbox}${describeTrust(caps)}`;
}

/** What a change worth logging is: everything but the GPUs' free memory, which moves all the time. */
function comparable(caps: RunnerCapabilities): unknown {
  return { ...caps, gpus: caps.gpus.map(({ freeBytes: _free, ...gpu }) => gpu) };
}

/**
 * The runner's presence in Postgres (the Runner row): written when it starts, then every
 * TROUPE_PRESENCE_MS with its GPUs (free memory, the run holding each). The runtime's capabilities are
 * probed at start and every TROUPE_CAPABILITIES_MS, in the background (importing torch takes seconds; the
 * runner takes jobs meanwhile), and the row carries the latest answer. The web counts a runner that missed
 * RUNNER_MISSED_HEARTBEATS beats as gone and offers its GPUs to no launch.
 */
export async function startPresence(ctx: RunnerContext, options: { probe?: () => Promise<ProbeResult> } = {}): Promise<Presence> {
  const { env, db, log } = ctx;
  const startedAt = new Date();
  const aborter = new AbortController();
  let caps: RunnerCapabilities | null = null;
  let stopped = false;

  const writeBeat = async (extra: { capabilities?: RunnerCapabilities; probeError?: string | null } = {}) => {
    const now = new Date();
    const memory = env.gpus > 0 ? await readGpuMemory() : [];
    const gpus = gpuRows(ctx.gpus.occupancy(), caps, memory);
    const common = {
      host: hostname(),
      gpus,
      cpuCount: cpus().length,
      memoryBytes: totalmem(),
      concurrency: env.concurrency,
      heartbeatMs: env.presenceMs,
      lastHeartbeatAt: now,
      ...(extra.capabilities ? { capabilities: extra.capabilities as object } : {}),
      ...(extra.probeError !== undefined ? { probeError: extra.probeError } : {}),
    };
    await db.runner.upsert({
      where: { id: env.runnerId },
      create: { id: env.runnerId, startedAt, ...common },
      update: common,
    });
  };

  // A restart under the same id starts clean: no capabilities from a previous incarnation, not stopped.
  await db.runner.upsert({
    where: { id: env.runnerId },
    create: {
      id: env.runnerId,
      host: hostname(),
      gpus: gpuRows(ctx.gpus.occupancy(), null, []),
      cpuCount: cpus().length,
      memoryBytes: totalmem(),
      concurrency: env.concurrency,
      heartbeatMs: env.presenceMs,
      startedAt,
      lastHeartbeatAt: startedAt,
    },
    update: {
      host: hostname(),
      capabilities: Prisma.DbNull,
      probeError: null,
      concurrency: env.concurrency,
      heartbeatMs: env.presenceMs,
      startedAt,
      lastHeartbeatAt: startedAt,
      stoppedAt: null,
    },
  });

  let writing: Promise<void> = Promise.resolve();
  const beat = (extra?: Parameters<typeof writeBeat>[0]) =>
    (writing = writing.then(() =>
      stopped ? undefined : writeBeat(extra).catch((error: unknown) => log.warn(`presence: could not write the runner row: ${errorLine(error)}`)),
    ));

  const probe = options.probe ?? (() => probeCapabilities(env.python, ctx.childEnv, { signal: aborter.signal }));
  let probing: Promise<void> | null = null;
  // Probed at start, then every TROUPE_CAPABILITIES_MS, so an engine installed (or removed) on a live runner
  // reaches the launch checks without a restart. One probe at a time; a change is logged, a repeat is not.
  const reprobe = () =>
    (probing ??= probe()
      .then((result) => {
        if (stopped) return;
        if (result.ok) {
          const before = caps;
          caps = result.capabilities;
          const summary = describeCapabilities(caps);
          if (!before) log.info(`capabilities: ${summary}`);
          else if (JSON.stringify(comparable(before)) !== JSON.stringify(comparable(caps))) log.info(`capabilities changed: ${summary}`);
          return beat({ capabilities: caps, probeError: null });
        }
        log.warn(`capabilities not published: ${result.error}`);
        return beat({ probeError: result.error });
      })
      .finally(() => (probing = null)));
  void reprobe();
  const reprobeTimer = setInterval(() => void reprobe(), env.capabilitiesMs);
  reprobeTimer.unref();

  const timer = setInterval(() => void beat(), env.presenceMs);
  timer.unref();
  return {
    beat: () => beat(),
    async stop() {
      clearInterval(timer);
      clearInterval(reprobeTimer);
      aborter.abort();
      await writing;
      stopped = true;
      await db.runner
        .updateMany({ where: { id: env.runnerId, startedAt }, data: { stoppedAt: new Date(), gpus: gpuRows(ctx.gpus.occupancy(), caps, []) } })
        .catch((error: unknown) => log.warn(`presence: could not mark the runner stopped: ${errorLine(error)}`));
    },
  };
}
