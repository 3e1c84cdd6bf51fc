import { offeredRunners, queuedRunOrder, RunnerCapabilities, RunnerGpu as RunnerGpuSchema, runnerState, unavailableChoices, waitingReason, type RunnerGpu } from "@troupe/contracts";
import { z } from "zod";
import type { Db } from "../../../server/db";
import { loadRunners } from "./offers";

export const RunnerGpuView = z.object({
  index: z.number(),
  name: z.string(),
  totalBytes: z.number().nullable(),
  freeBytes: z.number().nullable(),
  runId: z.string().nullable(),
  runName: z.string().nullable(),
});

export const RunnerView = z.object({
  id: z.string(),
  host: z.string(),
  state: z.enum(["live", "gone", "stopped"]),
  startedAt: z.date(),
  lastHeartbeatAt: z.date(),
  heartbeatMs: z.number(),
  cpuCount: z.number(),
  memoryBytes: z.number(),
  concurrency: z.number(),
  cuda: z.string().nullable(),
  runtimeVersion: z.string().nullable(),
  probeError: z.string().nullable(),
  /** Installed engines with their versions, in the order the runtime lists them; null = not installed. */
  engines: z.array(z.object({ name: z.string(), version: z.string().nullable() })),
  trainBackends: z.array(z.string()),
  clusterKinds: z.array(z.string()),
  sandbox: z.string().nullable(),
  gpus: z.array(RunnerGpuView),
  runs: z.array(z.object({ id: z.string(), name: z.string(), status: z.string(), gpuIds: z.array(z.number()) })),
});
export type RunnerView = z.infer<typeof RunnerView>;

export const QueuedRunView = z.object({ id: z.string(), name: z.string(), gpus: z.number(), createdAt: z.date(), reason: z.string() });

export const RunnersPageOutput = z.object({
  now: z.date(),
  runners: z.array(RunnerView),
  queued: z.array(QueuedRunView),
});
export type RunnersPageOutput = z.infer<typeof RunnersPageOutput>;

export const RunnerSupportOutput = z.object({
  /** Live runners that reported their capabilities; 0 = nothing is known to be impossible. */
  live: z.number(),
  /** Requirement id (contracts RUNNER_REQUIREMENTS) → why no live runner can honour it, or null. */
  unavailable: z.record(z.string(), z.string().nullable()),
  /** The live runners' offers, so the composer runs the launch's own runner check before the click. */
  offers: z.array(
    z.object({
      id: z.string(),
      host: z.string(),
      capabilities: RunnerCapabilities.nullable(),
      gpus: z.array(RunnerGpuSchema),
      concurrency: z.number(),
      heartbeatMs: z.number(),
      lastHeartbeatAt: z.date(),
      stoppedAt: z.date().nullable(),
      runningRuns: z.number(),
    }),
  ),
});

const QUEUED_SHOWN = 200;
const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;

/** Everything the /runners page shows: runners (live first), their GPUs and runs, and queued runs with why they wait. */
export async function loadRunnersPage(db: Db, now: Date = new Date()): Promise<RunnersPageOutput> {
  const runners = await loadRunners(db);
  const [active, queued] = await Promise.all([
    db.run.findMany({
      where: { status: { in: ["running", "paused"] }, runnerId: { in: runners.map((r) => r.id) } },
      select: { id: true, displayName: true, status: true, gpuIds: true, runnerId: true },
      orderBy: { startedAt: "asc" },
    }),
    db.run.findMany({
      where: { status: "queued" },
      select: { id: true, displayName: true, gpus: true, spec: true, createdAt: true, priority: true, attempt: true },
      // The first of the queue's order (contracts queuedRunOrder): higher priority first, runs that ran before first.
      orderBy: [{ priority: "desc" }, { attempt: "desc" }, { createdAt: "asc" }],
      take: QUEUED_SHOWN,
    }),
  ]);
  queued.sort(queuedRunOrder);
  // Runs are shown by their own readable names (Run.displayName), not their specs' shared one.
  const names = new Map(active.map((r) => [r.id, r.displayName]));
  const order = { live: 0, stopped: 1, gone: 2 } as const;
  const views: RunnerView[] = runners.map((r) => {
    const state = runnerState(r, now);
    const caps = r.capabilities;
    return {
      id: r.id,
      host: r.host,
      state,
      startedAt: r.startedAt,
      lastHeartbeatAt: r.lastHeartbeatAt,
      heartbeatMs: r.heartbeatMs,
      // The runtime's view of the host when it reported one (the runner process's otherwise).
      cpuCount: caps?.cpuCount ?? r.cpuCount,
      memoryBytes: caps?.memoryBytes ?? r.memoryBytes,
      concurrency: r.concurrency,
      cuda: caps?.cuda ?? null,
      runtimeVersion: caps?.runtimeVersion ?? null,
      probeError: r.probeError,
      engines: caps ? Object.entries(caps.engines).map(([name, version]) => ({ name, version })) : [],
      trainBackends: caps?.trainBackends ?? [],
      clusterKinds: caps?.clusterKinds ?? [],
      sandbox: caps ? (caps.sandbox.usable ? (caps.sandbox.mode ?? "yes") : "none") : null,
      gpus: r.gpus.map((g: RunnerGpu) => ({ ...g, runName: g.runId ? (names.get(g.runId) ?? null) : null })),
      runs: active.filter((run) => run.runnerId === r.id).map(({ id, displayName, status, gpuIds }) => ({ id, name: displayName, status, gpuIds })),
    };
  });
  views.sort((a, b) => order[a.state] - order[b.state] || a.id.localeCompare(b.id));
  // A runner neither live nor heard from in a day is history, not a host (test runners, retired machines).
  const shown = views.filter((v) => v.state === "live" || now.getTime() - v.lastHeartbeatAt.getTime() < FORGET_AFTER_MS);
  return {
    now,
    runners: shown,
    queued: queued.map((run, i) => ({
      id: run.id,
      name: run.displayName,
      gpus: run.gpus,
      createdAt: run.createdAt,
      reason: waitingReason({ spec: run.spec, gpus: run.gpus }, runners, i, now),
    })),
  };
}

export const WhyWaitingOutput = z.object({ reason: z.string().nullable() });

/** Why one run still waits (null unless it is queued): the reason /runners shows beside it, for its own page. */
export async function loadWhyWaiting(db: Db, runId: string, now: Date = new Date()): Promise<z.infer<typeof WhyWaitingOutput>> {
  const run = await db.run.findUnique({ where: { id: runId }, select: { status: true, spec: true, gpus: true, priority: true, attempt: true, createdAt: true } });
  if (!run || run.status !== "queued") return { reason: null };
  // The queue's order (contracts queuedRunOrder): priority, then runs that ran before, then first come.
  const sameClass = run.attempt > 0 ? { attempt: { gt: 0 } } : { attempt: 0 };
  const [runners, ahead] = await Promise.all([
    loadRunners(db),
    db.run.count({
      where: {
        status: "queued",
        OR: [
          { priority: { gt: run.priority } },
          ...(run.attempt === 0 ? [{ priority: run.priority, attempt: { gt: 0 } }] : []),
          { priority: run.priority, ...sameClass, createdAt: { lt: run.createdAt } },
        ],
      },
    }),
  ]);
  return { reason: waitingReason({ spec: run.spec, gpus: run.gpus }, runners, ahead, now) };
}

export async function loadRunnerSupport(db: Db, now: Date = new Date()) {
  const runners = await loadRunners(db);
  const unavailable = unavailableChoices(runners, now);
  const live = runners.filter((r) => runnerState(r, now) === "live" && r.capabilities !== null).length;
  const offers = offeredRunners(runners, now).map((r) => ({
    id: r.id,
    host: r.host,
    capabilities: r.capabilities,
    gpus: r.gpus,
    concurrency: r.concurrency,
    heartbeatMs: r.heartbeatMs,
    lastHeartbeatAt: r.lastHeartbeatAt,
    stoppedAt: r.stoppedAt,
    runningRuns: r.runningRuns,
  }));
  return { live, unavailable, offers };
}
