"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { formatBytes, formatRelative } from "../../../lib/format";
import { useNow } from "../../../lib/useNow";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import type { RunnerView } from "../server/runnersView";
import { GpuMemoryChart } from "./GpuMemoryChart";
import "./runners.css";

/** Engines shown on a runner's card, in this order, with the name people know them by. */
const ENGINE_NAMES: Record<string, string> = {
  torch: "torch",
  vllm: "vLLM",
  deepspeed: "DeepSpeed",
  "liger-kernel": "Liger",
  "flash-attn": "flash-attn",
  peft: "PEFT",
  ray: "Ray",
  triton: "Triton",
  pettingzoo: "PettingZoo",
  grpcio: "grpcio",
  transformers: "transformers",
  accelerate: "accelerate",
};

const REFRESH_MS = 5_000;

/**
 * Every runner host: its GPUs (name, memory, the run holding each), CPU and RAM, the engines its runtime
 * has with their versions, its last heartbeat and its runs; then the queued runs with why each waits.
 * Test ids: runner-card-<id>, runner-state-<id>, runner-gpu-<id>-<index>, runner-engines-<id>, queued-reason-<runId>.
 */
export function RunnersPage() {
  const trpc = useTRPC();
  const page = useQuery({ ...trpc.runner.list.queryOptions(), refetchInterval: REFRESH_MS });
  const now = useNow(1000);
  if (page.error) return <p className="error" role="alert">{errorMessage(page.error)}</p>;
  if (!page.data) return <p className="muted">Loading runners…</p>;
  const { runners, queued } = page.data;
  const live = runners.filter((r) => r.state === "live");
  return (
    <div className="runners-page">
      <div className="section-head">
        <h1>Runners</h1>
        <span className="muted small" data-testid="runners-summary">
          {live.length} live of {runners.length} · {live.reduce((n, r) => n + r.gpus.length, 0)} GPUs ·{" "}
          {live.reduce((n, r) => n + r.gpus.filter((g) => g.runId === null).length, 0)} free
        </span>
      </div>
      {runners.length === 0 ? (
        <p className="empty panel">
          No runner has reported yet. Start one on each GPU host: <code>npm run -w @troupe/runner start</code>
        </p>
      ) : (
        <>
          <section className="section panel">
            <h2>GPU memory per host</h2>
            <GpuMemoryChart runners={runners} />
          </section>
          <section className="section grid-cards">
            {runners.map((r) => (
              <RunnerCard key={r.id} runner={r} now={now} />
            ))}
          </section>
        </>
      )}
      <section className="section">
        <h2>Queued runs</h2>
        {queued.length === 0 ? (
          <p className="muted">Nothing is waiting.</p>
        ) : (
          <table className="table panel" data-testid="queued-runs">
            <thead>
              <tr>
                <th>Run</th>
                <th>GPUs</th>
                <th>Queued</th>
                <th>Why it waits</th>
              </tr>
            </thead>
            <tbody>
              {queued.map((run) => (
                <tr key={run.id}>
                  <td>
                    <Link href={`/runs/${run.id}`}>{run.name}</Link>
                  </td>
                  <td className="num">{run.gpus}</td>
                  <td>{formatRelative(run.createdAt, now)}</td>
                  <td data-testid={`queued-reason-${run.id}`}>{run.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}

function RunnerCard({ runner: r, now }: { runner: RunnerView; now: number }) {
  // In ENGINE_NAMES' order (the stored JSON does not keep the runtime's).
  const known = Object.keys(ENGINE_NAMES).flatMap((name) => r.engines.filter((e) => e.name === name));
  const installed = known.filter((e) => e.version !== null);
  const missing = known.filter((e) => e.version === null);
  return (
    <article className={`panel card runner-card runner-${r.state}`} data-testid={`runner-card-${r.id}`}>
      <div className="card-title">
        <h3>{r.id}</h3>
        <span className={`badge runner-badge-${r.state}`} data-testid={`runner-state-${r.id}`}>
          {r.state}
        </span>
      </div>
      <dl>
        <dt>Host</dt>
        <dd>{r.host}</dd>
        <dt>Heartbeat</dt>
        <dd title={r.lastHeartbeatAt.toISOString()}>
          {formatRelative(r.lastHeartbeatAt, now)} (every {r.heartbeatMs / 1000} s)
        </dd>
        <dt>CPU, RAM</dt>
        <dd>
          {r.cpuCount} cores, {formatBytes(r.memoryBytes)}
        </dd>
        <dt>CUDA</dt>
        <dd>{r.cuda ?? "none"}</dd>
        <dt>Runtime</dt>
        <dd>{r.runtimeVersion ? `troupe ${r.runtimeVersion}` : (r.probeError ?? "capabilities not reported yet")}</dd>
        <dt>Engines</dt>
        <dd data-testid={`runner-engines-${r.id}`}>
          {installed.map((e) => `${ENGINE_NAMES[e.name]} ${e.version}`).join(", ") || "—"}
          {missing.length > 0 ? <span className="muted"> · not installed: {missing.map((e) => ENGINE_NAMES[e.name]).join(", ")}</span> : null}
        </dd>
        <dt>Backends</dt>
        <dd>
          train {r.trainBackends.join(", ") || "—"}; cluster {r.clusterKinds.join(", ") || "—"}; sandbox {r.sandbox ?? "—"}
        </dd>
      </dl>
      {r.gpus.length === 0 ? (
        <p className="muted small">No GPUs: CPU runs only ({r.concurrency} at a time).</p>
      ) : (
        <table className="table runner-gpus">
          <thead>
            <tr>
              <th>GPU</th>
              <th>Memory free</th>
              <th>Held by</th>
            </tr>
          </thead>
          <tbody>
            {r.gpus.map((g) => (
              <tr key={g.index} data-testid={`runner-gpu-${r.id}-${g.index}`}>
                <td>
                  {g.index}: {g.name}
                </td>
                <td className="num">
                  {formatBytes(g.freeBytes)} of {formatBytes(g.totalBytes)}
                </td>
                <td>{g.runId ? <Link href={`/runs/${g.runId}`}>{g.runName ?? g.runId}</Link> : <span className="muted">free</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="small">
        <b>Running:</b>{" "}
        {r.runs.length === 0
          ? "nothing"
          : r.runs.map((run, i) => (
              <span key={run.id}>
                {i > 0 ? ", " : ""}
                <Link href={`/runs/${run.id}`}>{run.name}</Link> ({run.status}
                {run.gpuIds.length > 0 ? <span data-testid={`runner-run-gpus-${run.id}`}>{`, GPU${run.gpuIds.length > 1 ? "s" : ""} ${run.gpuIds.join(", ")}`}</span> : ", CPU"})
              </span>
            ))}
      </div>
    </article>
  );
}
