"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { RUN_STATES, type RunState } from "@troupe/contracts";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { StatusBadge } from "../../../components/StatusBadge";
import { AdvisoryBadge } from "../../advisories/components/AdvisoryBadge";
import { useAdvisorySummaries } from "../../advisories/hooks/useAdvisorySummaries";
import { formatMetric, formatBytes, formatRelative, runDuration } from "../../../lib/format";
import { useNow } from "../../../lib/useNow";
import { stableDateTime, useHydrated } from "../../../lib/useHydrated";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { KEY_METRICS, RUN_SORTS } from "../server/table";
import { confirmCancel } from "../lib/confirmCancel";
import { confirmDelete } from "../lib/confirmDelete";
import { refetchAfterWrite } from "../../../trpc/refetch";

const COLUMNS = ["status", "run", "experiment", "source", "tags", "created", "duration", "step", "reward", "loss", "kl", "memory"] as const;
type Column = (typeof COLUMNS)[number];
const DEFAULT_COLUMNS: Column[] = ["status", "run", "experiment", "source", "tags", "created", "duration", "step", "reward", "loss", "memory"];
const SORT_OF: Partial<Record<Column, (typeof RUN_SORTS)[number]>> = {
  status: "status",
  run: "name",
  created: "createdAt",
  step: "lastStep",
  duration: "startedAt",
  reward: "reward/mean",
  loss: "loss",
  kl: "kl",
};
const METRIC_SORTS = new Set<string>(KEY_METRICS);
const PAGE_SIZE = 50;

/** Per-actor values of one metric, compact: "alice 0.41 · bob 0.12". */
function perActor(values: Record<string, number> | undefined, sortedBy?: string) {
  if (!values) return <span className="muted">—</span>;
  const entries = Object.entries(values);
  // The value the table is sorted by (the chosen actor's, else the first) is bold.
  const strong = sortedBy === undefined ? undefined : sortedBy || entries[0]?.[0];
  return entries.map(([actor, v], i) => (
    <span key={actor} title={actor || undefined}>
      {i > 0 && " · "}
      {entries.length > 1 && <span className="muted">{actor} </span>}
      {actor === strong ? <b>{formatMetric(v)}</b> : formatMetric(v)}
    </span>
  ));
}

/**
 * Every run: filter by status, tag, experiment and source, search by name or id, sort, choose columns,
 * page through thousands on the server. All of it lives in the URL, so a view can be shared or reloaded.
 * Select 2–10 runs to compare them; cancel or re-run from the row.
 */
export function RunsExplorer() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const now = useNow(1000);
  const hydrated = useHydrated(); // no browser clock or time zone in server-rendered text (React error #418)
  const [selected, setSelected] = useState<string[]>([]);

  const get = (k: string) => params.get(k) ?? undefined;
  const status = (get("status")?.split(",").filter((s): s is RunState => (RUN_STATES as readonly string[]).includes(s)) ?? []) as RunState[];
  const sort = (RUN_SORTS as readonly string[]).includes(get("sort") ?? "") ? (get("sort") as (typeof RUN_SORTS)[number]) : "createdAt";
  const dir = get("dir") === "asc" ? "asc" : "desc";
  const page = Math.max(1, Number(get("page") ?? 1) || 1);
  const columns = (get("cols")?.split(",").filter((c): c is Column => (COLUMNS as readonly string[]).includes(c)) ?? DEFAULT_COLUMNS) as Column[];
  const source = ["ui", "api", "seed"].includes(get("source") ?? "") ? (get("source") as "ui" | "api" | "seed") : undefined;

  const setParams = (patch: Record<string, string | undefined>, resetPage = true) => {
    const next = new URLSearchParams(params.toString());
    for (const [k, v] of Object.entries(patch)) (v === undefined || v === "" ? next.delete(k) : next.set(k, v));
    if (resetPage && !("page" in patch)) next.delete("page");
    router.replace(`${pathname}?${next.toString()}`, { scroll: false });
  };

  const input = {
    page,
    pageSize: PAGE_SIZE,
    sort,
    dir,
    ...(METRIC_SORTS.has(sort) && get("actor") ? { sortActor: get("actor") } : {}),
    ...(status.length ? { status } : {}),
    ...(get("tag") ? { tag: get("tag") } : {}),
    ...(get("experiment") ? { experimentId: get("experiment") } : {}),
    ...(source ? { source } : {}),
    ...(get("q") ? { q: get("q") } : {}),
  } as const;
  const table = useQuery(trpc.run.table.queryOptions(input, { refetchInterval: 5000, placeholderData: (prev) => prev }));
  const experiments = useQuery(trpc.experiment.list.queryOptions({ limit: 100 }));
  const advisories = useAdvisorySummaries((table.data?.items ?? []).map((r) => r.id));
  const invalidate = () => refetchAfterWrite(queryClient, { queryKey: trpc.run.table.queryKey() });
  const cancel = useMutation(trpc.run.cancel.mutationOptions({ onSettled: invalidate }));
  const rerun = useMutation(trpc.run.rerun.mutationOptions({ onSettled: invalidate }));
  const remove = useMutation(trpc.run.delete.mutationOptions({ onSettled: invalidate }));
  const show = (c: Column) => columns.includes(c);
  const toggleSelect = (id: string) => setSelected((s) => (s.includes(id) ? s.filter((x) => x !== id) : s.length >= 10 ? s : [...s, id]));
  const sortBy = (c: Column) => {
    const field = SORT_OF[c];
    if (!field) return;
    setParams({ sort: field, dir: sort === field && dir === "desc" ? "asc" : "desc" });
  };
  const arrow = (c: Column) => (SORT_OF[c] === sort ? (dir === "desc" ? " ↓" : " ↑") : "");
  // Actors whose metrics the page shows: a metric column sorts by one of them (or by each run's first).
  const metricActors = [
    ...new Set([...(table.data?.items ?? []).flatMap((r) => Object.values(r.keyMetrics).flatMap((v) => Object.keys(v))), ...(get("actor") ? [get("actor")!] : [])]),
  ]
    .filter(Boolean)
    .sort();
  const pages = table.data ? Math.max(1, Math.ceil(table.data.total / PAGE_SIZE)) : 1;

  return (
    <section className="section runs-explorer">
      <div className="toolbar">
        <label>
          Search
          <input type="search" defaultValue={get("q") ?? ""} placeholder="name or id" onChange={(e) => setParams({ q: e.target.value.trim() || undefined })} data-testid="runs-search" />
        </label>
        <label>
          Status
          <select value={status[0] ?? ""} onChange={(e) => setParams({ status: e.target.value || undefined })} data-testid="runs-status" aria-label="Filter runs by status">
            <option value="">any</option>
            {RUN_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tag
          <select value={get("tag") ?? ""} onChange={(e) => setParams({ tag: e.target.value || undefined })} data-testid="runs-tag" aria-label="Filter runs by tag">
            <option value="">any</option>
            {(table.data?.tags ?? []).map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Experiment
          <select value={get("experiment") ?? ""} onChange={(e) => setParams({ experiment: e.target.value || undefined })} aria-label="Filter runs by experiment">
            <option value="">any</option>
            {(experiments.data?.items ?? []).map((x) => (
              <option key={x.id} value={x.id}>
                {x.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Source
          <select value={source ?? ""} onChange={(e) => setParams({ source: e.target.value || undefined })} aria-label="Filter runs by source">
            <option value="">any</option>
            <option value="ui">UI</option>
            <option value="api">API</option>
            <option value="seed">seed</option>
          </select>
        </label>
        {METRIC_SORTS.has(sort) && (
          <label title="A metric column sorts by this actor's latest value">
            Sort by actor
            <select value={get("actor") ?? ""} onChange={(e) => setParams({ actor: e.target.value || undefined })} data-testid="runs-sort-actor" aria-label="Sort metric columns by actor">
              <option value="">first of each run</option>
              {metricActors.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          </label>
        )}
        <details>
          <summary className="small">Columns</summary>
          <div className="panel" style={{ position: "absolute", zIndex: 5, display: "grid", gap: "0.2rem" }}>
            {COLUMNS.map((c) => (
              <label key={c}>
                <input
                  type="checkbox"
                  checked={show(c)}
                  onChange={() => setParams({ cols: (show(c) ? columns.filter((x) => x !== c) : [...columns, c]).join(",") }, false)}
                />{" "}
                {c}
              </label>
            ))}
          </div>
        </details>
        <button
          type="button"
          disabled={selected.length < 2}
          onClick={() => router.push(`/compare?ids=${selected.join(",")}`)}
          data-testid="runs-compare"
          title="Select 2 to 10 runs"
        >
          Compare {selected.length > 0 ? `(${selected.length})` : ""}
        </button>
      </div>
      {table.isError && <div className="form-error">Could not load runs: {errorMessage(table.error)}</div>}
      {(cancel.error ?? rerun.error ?? remove.error) && (
        <div className="form-error" role="alert">
          {errorMessage((cancel.error ?? rerun.error ?? remove.error)!)}
        </div>
      )}
      {/* Many columns scroll sideways rather than squeezing every row onto several lines. */}
      <div className="table-scroll">
      <table className="table runs-table" data-testid="runs-table">
        <thead>
          <tr>
            <th />
            {columns.map((c) => (
              <th key={c} className={SORT_OF[c] ? "sortable" : undefined} onClick={() => sortBy(c)}>
                {c}
                {arrow(c)}
              </th>
            ))}
            <th />
          </tr>
        </thead>
        <tbody>
          {(table.data?.items ?? []).map((r) => (
            <tr key={r.id} data-testid="run-row" data-run-id={r.id}>
              <td>
                <input type="checkbox" checked={selected.includes(r.id)} onChange={() => toggleSelect(r.id)} aria-label={`select ${r.name}`} data-testid="run-select" />
              </td>
              {show("status") && (
                <td className="run-status">
                  <StatusBadge status={r.status} />
                  <AdvisoryBadge summary={advisories.get(r.id)} />
                </td>
              )}
              {show("run") && (
                <td className="run-name">
                  <Link href={`/runs/${r.id}`} data-testid="run-name">
                    {r.name}
                  </Link>
                  {/* The spec's name and the short id (search finds both); the whole id on hover. */}
                  <div className="muted small">
                    {r.specName} <code title={r.id}>#{r.id.slice(-5)}</code>
                  </div>
                </td>
              )}
              {show("experiment") && <td className="experiment-name">{r.experimentId ? <Link href={`/experiments/${r.experimentId}`}>{r.experimentName}</Link> : <span className="muted">—</span>}</td>}
              {show("source") && <td>{r.source}</td>}
              {show("tags") && (
                <td>
                  <div className="chips">
                    {r.tags.map((t) => (
                      <span key={t} className="chip">
                        {t}
                      </span>
                    ))}
                  </div>
                </td>
              )}
              {show("created") && <td title={hydrated ? r.createdAt.toLocaleString() : stableDateTime(r.createdAt)}>{hydrated ? formatRelative(r.createdAt, now) : stableDateTime(r.createdAt)}</td>}
              {show("duration") && <td className="num">{hydrated || r.finishedAt ? runDuration(r, now) : "—"}</td>}
              {show("step") && (
                <td className="num">
                  {r.lastStep ?? 0}
                  {r.totalSteps !== null && <span className="muted"> / {r.totalSteps}</span>}
                </td>
              )}
              {show("reward") && <td className="num">{perActor(r.keyMetrics["reward/mean"], sort === "reward/mean" ? (get("actor") ?? "") : undefined)}</td>}
              {show("loss") && <td className="num">{perActor(r.keyMetrics.loss, sort === "loss" ? (get("actor") ?? "") : undefined)}</td>}
              {show("kl") && <td className="num">{perActor(r.keyMetrics.kl, sort === "kl" ? (get("actor") ?? "") : undefined)}</td>}
              {show("memory") && (
                <td className="num">
                  {r.peakDeviceBytes !== null ? formatBytes(r.peakDeviceBytes) : r.peakRssBytes !== null ? `${formatBytes(r.peakRssBytes)} RSS` : "—"}
                </td>
              )}
              {/* The buttons stack when a queued or running row has two and the screen is narrow. */}
              <td className="run-actions">
                <button type="button" className="secondary" onClick={() => rerun.mutate({ runId: r.id })} title="Re-run with the same frozen spec">
                  Re-run
                </button>{" "}
                {r.status === "queued" || r.status === "running" || r.status === "paused" ? (
                  <button type="button" className="danger" onClick={() => confirmCancel(r) && cancel.mutate({ runId: r.id })}>
                    Cancel
                  </button>
                ) : (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => confirmDelete(r) && remove.mutate({ runId: r.id })}
                    disabled={remove.isPending && remove.variables?.runId === r.id}
                    data-testid="run-row-delete"
                  >
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>
      <div className="pager">
        <span className="muted" data-testid="runs-total">
          {table.data ? `${table.data.total} ${table.data.total === 1 ? "run" : "runs"}` : "…"}
        </span>
        <button type="button" className="secondary" disabled={page <= 1} onClick={() => setParams({ page: String(page - 1) }, false)}>
          ← Newer
        </button>
        <span>
          page {page} / {pages}
        </span>
        <button type="button" className="secondary" disabled={page >= pages} onClick={() => setParams({ page: String(page + 1) }, false)} data-testid="runs-next">
          Older →
        </button>
      </div>
    </section>
  );
}
