import { z } from "zod";
import type { FieldIssue } from "./issues";

/**
 * Runners in plain sight: what a runner publishes about its host (the runtime's
 * `python -m troupe capabilities --json`, plus which run holds each GPU), when a runner counts as
 * live, and the one table of what a spec asks of a runner (RUNNER_REQUIREMENTS), which the web's
 * launch checks, the designer's disabled choices, a queued run's waiting reason and the runtime's
 * drift test (gpu-runtime/tests/test_runner_requirements.py, through the exported JSON) all read.
 */

export const RunnerCapabilities = z.looseObject({
  runtimeVersion: z.string(),
  python: z.string(),
  /** torch's CUDA version when a CUDA device is usable, else null. */
  cuda: z.string().nullable(),
  gpus: z.array(
    z.looseObject({
      index: z.number().int(),
      name: z.string(),
      totalBytes: z.number(),
      freeBytes: z.number(),
      bf16: z.boolean(),
    }),
  ),
  cpuCount: z.number().int().nullable(),
  memoryBytes: z.number().nullable(),
  /** Package name → version, null when not installed (torch, vllm, deepspeed, liger-kernel, flash-attn, peft, ray, triton, …). */
  engines: z.record(z.string(), z.string().nullable()),
  trainBackends: z.array(z.string()),
  rolloutBackends: z.array(z.string()),
  clusterKinds: z.array(z.string()),
  precisions: z.array(z.string()),
  sandbox: z.looseObject({ usable: z.boolean(), mode: z.string().nullable(), detail: z.string().nullable() }),
});
export type RunnerCapabilities = z.infer<typeof RunnerCapabilities>;

/** One GPU of a runner as its heartbeat last saw it, with the run holding it (null: free). */
export const RunnerGpu = z.object({
  index: z.number().int().min(0),
  name: z.string(),
  totalBytes: z.number().nullable(),
  freeBytes: z.number().nullable(),
  runId: z.string().nullable(),
});
export type RunnerGpu = z.infer<typeof RunnerGpu>;

/** A runner as a launch check sees it (the Runner row, parsed). */
export interface RunnerOffer {
  id: string;
  host: string;
  capabilities: RunnerCapabilities | null;
  gpus: RunnerGpu[];
  concurrency: number;
  heartbeatMs: number;
  lastHeartbeatAt: Date;
  stoppedAt: Date | null;
  /** Runs it is running now (status running or paused with this runnerId). */
  runningRuns: number;
}

/** The columns of a stored Runner row that make an offer (its JSON columns as read, not yet trusted). */
export interface StoredRunner {
  id: string;
  host: string;
  capabilities: unknown;
  gpus: unknown;
  concurrency: number;
  heartbeatMs: number;
  lastHeartbeatAt: Date;
  stoppedAt: Date | null;
}

/**
 * A Runner row as an offer: JSON that does not parse leaves the runner without capabilities (shown, never
 * trusted) or GPUs. `capabilitiesMalformed` tells a row whose capabilities were written but unreadable.
 */
export function runnerOffer(row: StoredRunner, runningRuns: number): RunnerOffer & { capabilitiesMalformed: boolean } {
  const caps = RunnerCapabilities.safeParse(row.capabilities);
  const gpus = RunnerGpu.array().safeParse(row.gpus);
  return {
    id: row.id,
    host: row.host,
    capabilities: row.capabilities !== null && caps.success ? caps.data : null,
    gpus: gpus.success ? gpus.data : [],
    concurrency: row.concurrency,
    heartbeatMs: row.heartbeatMs,
    lastHeartbeatAt: row.lastHeartbeatAt,
    stoppedAt: row.stoppedAt,
    runningRuns,
    capabilitiesMalformed: row.capabilities !== null && !caps.success,
  };
}

/** A runner that missed this many presence heartbeats in a row is gone: shown as such and offered to no launch. */
export const RUNNER_MISSED_HEARTBEATS = 3;

export type RunnerState = "live" | "gone" | "stopped";

export function runnerState(r: Pick<RunnerOffer, "heartbeatMs" | "lastHeartbeatAt" | "stoppedAt">, now: Date = new Date()): RunnerState {
  if (r.stoppedAt) return "stopped";
  return now.getTime() - r.lastHeartbeatAt.getTime() > r.heartbeatMs * RUNNER_MISSED_HEARTBEATS ? "gone" : "live";
}

/**
 * A capability a runner may have, read from its RunnerCapabilities:
 * `cuda` (a usable CUDA device), `sandbox` (user code may run: bubblewrap works, or the operator opted out
 * with TROUPE_SANDBOX=off), `engines.<package>` (installed), `clusterKinds.<kind>` and
 * `precisions.<precision>` (listed).
 */
export type CapabilityKey = "cuda" | "sandbox" | `engines.${string}` | `clusterKinds.${string}` | `precisions.${string}`;

export type RequirementWhen = { equals: string } | { startsWith: string } | { nonEmpty: true } | { present: true };

export interface RunnerRequirement {
  id: string;
  /** The spec field that asks for it, dotted, `*` for every index (`actors.*.backend`). */
  field: string;
  /** The field's value that asks for it. */
  when: RequirementWhen;
  /** Every key a runner must have. */
  needs: CapabilityKey[];
  /** What a runner must have, in words ("vLLM and a CUDA GPU"). */
  label: string;
  /** Short, for a waiting reason ("needs 2 GPUs with vLLM"). */
  short: string;
}

/**
 * The one table of what a spec asks of a runner's host. The runtime refuses the same things on a host
 * without them (gpu-runtime/src/troupe/spec/support.py); its drift test reads this table from
 * gpu-runtime/src/troupe/schema/runner-requirements.v1.json and checks both ways that support.py refuses
 * exactly these fields for want of exactly these capabilities. `placement.gpus` also asks for as many GPUs
 * as its highest index + 1 (see specRequirements).
 */
export const RUNNER_REQUIREMENTS: RunnerRequirement[] = [
  { id: "vllm", field: "actors.*.backend", when: { equals: "vllm" }, needs: ["cuda", "engines.vllm"], label: "vLLM and a CUDA GPU", short: "vLLM" },
  {
    id: "deepspeed",
    field: "actors.*.training.backend",
    when: { equals: "deepspeed" },
    needs: ["cuda", "engines.deepspeed"],
    label: "DeepSpeed and a CUDA GPU",
    short: "DeepSpeed",
  },
  { id: "lora", field: "actors.*.training.lora", when: { present: true }, needs: ["engines.peft"], label: "PEFT (for LoRA)", short: "PEFT" },
  { id: "gpus", field: "actors.*.placement.gpus", when: { nonEmpty: true }, needs: ["cuda"], label: "CUDA GPUs", short: "CUDA" },
  { id: "bf16", field: "actors.*.training.precision", when: { equals: "bf16" }, needs: ["precisions.bf16"], label: "GPUs with bf16", short: "bf16" },
  { id: "ray", field: "cluster.kind", when: { equals: "ray" }, needs: ["clusterKinds.ray"], label: "Ray", short: "Ray" },
  { id: "cudaDevice", field: "trainer.device", when: { equals: "cuda" }, needs: ["cuda"], label: "a CUDA GPU", short: "CUDA" },
  {
    id: "pettingzoo",
    field: "environments.*.kind",
    when: { equals: "game" },
    needs: ["engines.pettingzoo"],
    label: "PettingZoo (board games)",
    short: "PettingZoo",
  },
  {
    id: "grpc",
    field: "environments.*.url",
    when: { startsWith: "grpc://" },
    needs: ["engines.grpcio", "engines.protobuf"],
    label: "grpcio and protobuf (remote environments over gRPC)",
    short: "gRPC",
  },
  // User code runs only in the sandbox (bubblewrap; or unsandboxed where the operator set TROUPE_SANDBOX=off).
  { id: "pythonReward", field: "rewards.*.source.kind", when: { equals: "python" }, needs: ["sandbox"], label: "a sandbox for user code (Python rewards run in it)", short: "a sandbox" },
  { id: "codeEnvironment", field: "environments.*.kind", when: { equals: "code" }, needs: ["sandbox"], label: "a sandbox for user code (the model's programs run in it)", short: "a sandbox" },
  { id: "toolsEnvironment", field: "environments.*.kind", when: { equals: "tools" }, needs: ["sandbox"], label: "a sandbox for user code (tools run in it)", short: "a sandbox" },
];

export function hasCapability(caps: RunnerCapabilities, key: CapabilityKey): boolean {
  if (key === "cuda") return caps.cuda !== null && caps.gpus.length > 0;
  if (key === "sandbox") return caps.sandbox.usable;
  const [group, name] = key.split(/\.(.*)/s) as [string, string];
  if (group === "engines") return Boolean(caps.engines[name]);
  if (group === "clusterKinds") return caps.clusterKinds.includes(name);
  if (group === "precisions") return caps.precisions.includes(name);
  return false;
}

/** Every (path, value) the dotted pattern reaches in a parsed spec. */
function reach(value: unknown, parts: string[], at: string[] = []): { path: string; value: unknown }[] {
  if (parts.length === 0) return [{ path: at.join("."), value }];
  const [head, ...rest] = parts as [string, ...string[]];
  if (head === "*") {
    return Array.isArray(value) ? value.flatMap((item, i) => reach(item, rest, [...at, String(i)])) : [];
  }
  if (value === null || typeof value !== "object" || !(head in value)) return [];
  return reach((value as Record<string, unknown>)[head], rest, [...at, head]);
}

function asks(when: RequirementWhen, value: unknown): boolean {
  if ("equals" in when) return value === when.equals;
  if ("startsWith" in when) return typeof value === "string" && value.startsWith(when.startsWith);
  if ("nonEmpty" in when) return Array.isArray(value) && value.length > 0;
  return value !== undefined && value !== null;
}

/** What one field of a spec asks of a runner. */
export interface SpecRequirement {
  requirement: RunnerRequirement;
  /** Dotted path of the field that asks for it (`actors.1.backend`). */
  path: string;
  /** For `gpus`: how many GPUs the host needs (highest index + 1). */
  gpuCount?: number;
}

/** A spec's demands on a runner (the parsed RunSpec, defaults filled); an openai actor asks for nothing locally. */
export function specRequirements(spec: unknown): SpecRequirement[] {
  const out: SpecRequirement[] = [];
  for (const requirement of RUNNER_REQUIREMENTS) {
    for (const hit of reach(spec, requirement.field.split("."))) {
      if (!asks(requirement.when, hit.value)) continue;
      const found: SpecRequirement = { requirement, path: hit.path };
      if (requirement.id === "gpus") found.gpuCount = Math.max(...(hit.value as number[])) + 1;
      out.push(found);
    }
  }
  return out;
}

export function meets(runner: RunnerOffer, need: SpecRequirement): boolean {
  const caps = runner.capabilities;
  if (!caps) return false;
  if (!need.requirement.needs.every((key) => hasCapability(caps, key))) return false;
  // The GPUs it hands out (TROUPE_RUNNER_GPUS, its slots), which may be fewer than the host has.
  return need.gpuCount === undefined || runner.gpus.length >= need.gpuCount;
}

const GIB = 1024 ** 3;

/** "gpu-a (torch 2.8.0, CUDA 12.8, 2 GPUs)": what a refusal lists about each live runner. */
export function describeRunner(runner: RunnerOffer): string {
  const caps = runner.capabilities;
  if (!caps) return `${runner.id} (capabilities not reported yet)`;
  const parts = [`torch ${caps.engines.torch ?? "?"}`, caps.cuda ? `CUDA ${caps.cuda}` : "no CUDA"];
  for (const [name, shown] of [["vllm", "vLLM"], ["deepspeed", "DeepSpeed"], ["ray", "Ray"]] as const) {
    if (caps.engines[name]) parts.push(`${shown} ${caps.engines[name]}`);
  }
  const first = caps.gpus[0];
  const count = runner.gpus.length;
  parts.push(count === 0 || !first ? "no GPUs" : `${count} GPU${count > 1 ? "s" : ""} ${first.name} ${Math.round(first.totalBytes / GIB)} GiB`);
  return `${runner.id} (${parts.join(", ")})`;
}

/** The runners a launch is checked against: live, with capabilities reported. */
export function offeredRunners(runners: RunnerOffer[], now: Date = new Date()): RunnerOffer[] {
  return runners.filter((r) => runnerState(r, now) === "live" && r.capabilities !== null);
}

function needText(need: SpecRequirement): string {
  return need.gpuCount !== undefined ? `${need.gpuCount} CUDA GPU${need.gpuCount > 1 ? "s" : ""}` : need.requirement.label;
}

/**
 * Launch check against the live runners. With no live runner that has reported its capabilities (a fresh
 * start before the first heartbeat, a test database), nothing is refused: the run is queued and its waiting
 * reason says no runner is live. Otherwise a spec that no single live runner can run is refused, at the
 * field of each demand no runner meets ("actors.1.backend: no runner has vLLM and a CUDA GPU; runners: …"),
 * or, when every demand is met by some runner but none meets them all, at the first demand's field.
 */
export function runnerIssues(spec: unknown, runners: RunnerOffer[], now: Date = new Date()): FieldIssue[] {
  const offered = offeredRunners(runners, now);
  if (offered.length === 0) return [];
  const needs = specRequirements(spec);
  if (needs.length === 0 || offered.some((r) => needs.every((n) => meets(r, n)))) return [];
  const listed = `runners: ${offered.map(describeRunner).join(", ")}`;
  const unmet = needs.filter((n) => !offered.some((r) => meets(r, n)));
  if (unmet.length > 0) return unmet.map((n) => ({ path: n.path, message: `no runner has ${needText(n)}; ${listed}` }));
  const all = [...new Set(needs.map(needText))].join(", ");
  return [{ path: needs[0]!.path, message: `no one runner has all of ${all}; ${listed}` }];
}

/**
 * Why a designer choice cannot run on any live runner, by requirement id (null: some live runner can, or
 * none has reported yet, so nothing is known to be impossible).
 */
export function unavailableChoices(runners: RunnerOffer[], now: Date = new Date()): Record<string, string | null> {
  const offered = offeredRunners(runners, now);
  const out: Record<string, string | null> = {};
  for (const requirement of RUNNER_REQUIREMENTS) {
    const need: SpecRequirement = { requirement, path: requirement.field };
    out[requirement.id] =
      offered.length === 0 || offered.some((r) => meets(r, need))
        ? null
        : `no live runner has ${requirement.label}; runners: ${offered.map(describeRunner).join(", ")}`;
  }
  return out;
}

/** The largest number of GPUs any live runner has (0 when none has one). */
export function mostGpus(runners: RunnerOffer[], now: Date = new Date()): number {
  return Math.max(0, ...offeredRunners(runners, now).map((r) => r.gpus.length));
}

/**
 * Why a queued run is still waiting, in one sentence: no live runner; no live runner can run it (the launch
 * check's reason: a runner went away after it was queued); not enough free GPUs on any runner that could
 * ("needs 2 GPUs with vLLM; the largest free host has 1"); every runner that could is busy; or it is next.
 */
export function waitingReason(
  run: { spec: unknown; gpus: number },
  runners: RunnerOffer[],
  ahead: number,
  now: Date = new Date(),
): string {
  const offered = offeredRunners(runners, now);
  if (offered.length === 0) {
    const gone = runners.filter((r) => runnerState(r, now) !== "live").length;
    return `no live runner${gone > 0 ? ` (${gone} gone or stopped)` : ""}: start one with npm run -w @troupe/runner start`;
  }
  const needs = specRequirements(run.spec);
  const able = offered.filter((r) => needs.every((n) => meets(r, n)) && r.gpus.length >= run.gpus);
  if (able.length === 0) {
    const issue = runnerIssues(run.spec, runners, now)[0];
    if (issue) return `no live runner can run it: ${issue.path}: ${issue.message}`;
    return `needs ${run.gpus} GPU${run.gpus === 1 ? "" : "s"}; the largest live runner has ${mostGpus(runners, now)}`;
  }
  if (run.gpus > 0) {
    const free = (r: RunnerOffer) => r.gpus.filter((g) => g.runId === null).length;
    const maxFree = Math.max(...able.map(free));
    if (maxFree < run.gpus) {
      const shorts = [...new Set(needs.filter((n) => n.requirement.id !== "gpus" && n.requirement.id !== "cudaDevice").map((n) => n.requirement.short))];
      const withWhat = shorts.length > 0 ? ` with ${shorts.join(" and ")}` : "";
      return `needs ${run.gpus} GPU${run.gpus === 1 ? "" : "s"}${withWhat}; the largest free host has ${maxFree}`;
    }
  }
  if (able.every((r) => r.runningRuns >= r.concurrency)) {
    return `every runner that can run it is busy (${able.map((r) => `${r.id} runs ${r.runningRuns} of ${r.concurrency}`).join(", ")})`;
  }
  return ahead > 0 ? `${ahead} queued run${ahead === 1 ? "" : "s"} ahead of it` : "next in the queue: a runner takes it at its next poll";
}

/** The requirement table as the runtime reads it (gpu-runtime/src/troupe/schema/runner-requirements.v1.json). */
export function renderRunnerRequirements(): string {
  return (
    JSON.stringify(
      {
        $comment: "Generated from packages/contracts/src/runners.ts (npm run contracts:export); never edit by hand.",
        missedHeartbeats: RUNNER_MISSED_HEARTBEATS,
        requirements: RUNNER_REQUIREMENTS.map(({ id, field, when, needs, label }) => ({ id, field, when, needs, label })),
      },
      null,
      2,
    ) + "\n"
  );
}
