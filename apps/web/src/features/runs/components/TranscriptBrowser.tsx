"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { formatMetric } from "../../../lib/format";
import { useTRPC } from "../../../trpc/react";
import { conversationShape, speakerLabel } from "../lib/conversationShape";
import { actorColour } from "../lib/specNames";
import { transcriptFiltersFromQuery } from "../lib/transcriptLink";
import { useTranscriptRefresh } from "../hooks/useTranscriptRefresh";
import { groupKey, transcriptRows, type TranscriptGroup, type TranscriptRow } from "../lib/transcriptGroups";
import type { EpisodeOut } from "../server/schemas";
import { TranscriptGroupHeader } from "./TranscriptGroupHeader";
import { TranscriptGraph } from "./TranscriptGraph";
import { TranscriptView } from "./TranscriptView";
import { VirtualList } from "./VirtualList";

export interface TranscriptFilters {
  step?: number;
  fromStep?: number;
  toStep?: number;
  group?: number;
  datasetRow?: number;
  actor?: string;
  environment?: string;
  minReward?: number;
  maxReward?: number;
  q?: string;
}

const ROW = 54;
const numberOrUndefined = (v: string) => (v.trim() === "" || !Number.isFinite(Number(v)) ? undefined : Number(v));

/**
 * Browse a run's transcripts: filters (step, GRPO group, actor, environment, reward range, text,
 * dataset row), a windowed list of every match grouped by GRPO group (a header row per group with its
 * reward mean, std and every sample's reward and advantage; pages load as you scroll) and the selected
 * transcript.
 */
export function TranscriptBrowser(props: {
  runId: string;
  actors: string[];
  environments: string[];
  live: boolean;
  episodesSeen: number;
  /** Each environment's round spec (multi-turn environments): their transcripts can be drawn on it. */
  roundSpecs?: Readonly<Record<string, string>>;
}) {
  const trpc = useTRPC();
  // A link (e.g. from a health advisory) may open the tab with filters set: read once.
  const query = useSearchParams();
  const [f, setF] = useState<TranscriptFilters>(() => transcriptFiltersFromQuery(new URLSearchParams(query.toString())));
  const [text, setText] = useState("");
  const [selected, setSelected] = useState<EpisodeOut | null>(null);
  const [onGraph, setOnGraph] = useState(false);
  // Search as one types, without a query per keystroke.
  useEffect(() => {
    const t = setTimeout(() => setF((prev) => ({ ...prev, q: text.trim() || undefined })), 300);
    return () => clearTimeout(t);
  }, [text]);

  const steps = useQuery(trpc.run.episodeSteps.queryOptions({ runId: props.runId }, { refetchInterval: props.live ? 5000 : false }));
  // Unset filters are left out (not sent as undefined), so the query key stays small and stable.
  const defined = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as TranscriptFilters;
  const input = { runId: props.runId, limit: 100, ...defined };
  const list = useInfiniteQuery(
    trpc.run.transcripts.infiniteQueryOptions(input, {
      getNextPageParam: (page) => page.nextCursor,
      refetchInterval: props.live ? 5000 : false,
    }),
  );
  useTranscriptRefresh(props.live, props.episodesSeen, () => {
    void steps.refetch();
    void list.refetch();
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  const groups = new Map<string, TranscriptGroup>(list.data?.pages.flatMap((p) => p.groups.map((g) => [groupKey(g), g] as const)) ?? []);
  const rows = transcriptRows(items, groups);
  // Actors of the spec plus any seen in transcripts (an environment may bring its own, e.g. a judge);
  // the prompt's `actor` is its dataset, not a speaker.
  const seenActors = useRef(new Set<string>());
  for (const e of items) for (const m of e.messages) if (m.role !== "user") seenActors.current.add(m.actor);
  const actors = [...new Set([...props.actors, ...(steps.data?.actors ?? []), ...seenActors.current])];
  const set = (patch: Partial<TranscriptFilters>) => setF((prev) => ({ ...prev, ...patch }));
  const current = selected ?? items[0] ?? null;

  return (
    <section className="panel" data-testid="transcripts" data-episodes={items.length}>
      <div className="toolbar">
        <label>
          Step
          <select value={f.step ?? ""} onChange={(e) => set({ step: numberOrUndefined(e.target.value) })} data-testid="filter-step" aria-label="Filter transcripts by step">
            <option value="">all</option>
            {(steps.data?.steps ?? []).map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Group
          <input type="number" min={0} style={{ width: "4.5rem" }} value={f.group ?? ""} onChange={(e) => set({ group: numberOrUndefined(e.target.value) })} data-testid="filter-group" aria-label="Filter transcripts by GRPO group" />
        </label>
        <label>
          Actor
          <select value={f.actor ?? ""} onChange={(e) => set({ actor: e.target.value || undefined })} data-testid="filter-actor" aria-label="Filter transcripts by actor">
            <option value="">any</option>
            {actors.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        {props.environments.length > 1 && (
          <label>
            Environment
            <select value={f.environment ?? ""} onChange={(e) => set({ environment: e.target.value || undefined })} data-testid="filter-environment" aria-label="Filter transcripts by environment">
              <option value="">any</option>
              {props.environments.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Reward
          <input type="number" step="any" style={{ width: "5rem" }} placeholder="min" value={f.minReward ?? ""} onChange={(e) => set({ minReward: numberOrUndefined(e.target.value) })} data-testid="filter-min-reward" aria-label="Lowest reward" />
          <input type="number" step="any" style={{ width: "5rem" }} placeholder="max" value={f.maxReward ?? ""} onChange={(e) => set({ maxReward: numberOrUndefined(e.target.value) })} data-testid="filter-max-reward" aria-label="Highest reward" />
        </label>
        <label>
          Text
          <input type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="search turns" data-testid="filter-text" aria-label="Search transcript turns" />
        </label>
        {(f.fromStep !== undefined || f.toStep !== undefined) && (
          <span className="chip" data-testid="filter-step-range">
            steps {f.fromStep ?? 0}–{f.toStep ?? "end"}{" "}
            <button type="button" className="secondary" style={{ padding: "0 0.3rem" }} onClick={() => set({ fromStep: undefined, toStep: undefined })} aria-label="clear the step range">
              ×
            </button>
          </span>
        )}
        {f.datasetRow !== undefined && (
          <span className="chip">
            dataset row {f.datasetRow}{" "}
            <button type="button" className="secondary" style={{ padding: "0 0.3rem" }} onClick={() => set({ datasetRow: undefined })}>
              ×
            </button>
          </span>
        )}
        <span className="muted" data-testid="transcripts-count">
          {list.isPending ? "loading…" : `${items.length}${list.hasNextPage ? "+" : ""} transcripts`}
        </span>
      </div>
      {list.isError && <div className="form-error">{list.error.message}</div>}
      <div className="transcripts">
        <VirtualList<TranscriptRow<EpisodeOut>>
          testId="transcript-list"
          items={rows}
          rowHeight={ROW}
          height={560}
          rowKey={(r) => (r.kind === "group" ? r.key : r.episode.seq)}
          onNearEnd={() => list.hasNextPage && !list.isFetchingNextPage && void list.fetchNextPage()}
          renderRow={(r) => {
            if (r.kind === "group") return <TranscriptGroupHeader id={r.id} group={r.group} height={ROW} />;
            const e = r.episode;
            const shape = conversationShape(e.messages);
            const lastTurn = e.messages.at(-1);
            return (
              <div
                className="vrow"
                style={{ height: ROW }}
                aria-selected={current?.seq === e.seq}
                onClick={() => setSelected(e)}
                data-testid="transcript-row"
                data-actors={[...new Set(e.messages.filter((m) => m.role !== "user").map((m) => m.actor))].join(",")}
              >
                <div>
                  <b>sample {e.sample}</b> · reward <b>{formatMetric(e.reward)}</b>
                  {e.advantage !== null && <> · adv {formatMetric(e.advantage)}</>}
                  {e.datasetRow !== null && <span className="muted"> · row {e.datasetRow}</span>}
                </div>
                <div className="line2">
                  <span data-testid="transcript-shape" title={`${shape.turns} turns: ${shape.text}`}>
                    <b>{shape.turns} turns</b> · {shape.text}
                  </span>
                  {lastTurn && (
                    <>
                      {" — "}
                      <span style={{ color: actorColour(actors, lastTurn.actor) }}>{speakerLabel(lastTurn).name}: </span>
                      {lastTurn.content}
                    </>
                  )}
                </div>
              </div>
            );
          }}
        />
        <div style={{ maxHeight: 560, overflow: "auto" }}>
          {current ? (
            <>
              {current.datasetRow !== null && (
                <button type="button" className="secondary" style={{ marginBottom: "0.4rem" }} onClick={() => set({ datasetRow: current.datasetRow ?? undefined, step: undefined })} data-testid="same-row">
                  Same prompt across steps (row {current.datasetRow})
                </button>
              )}
              {props.roundSpecs?.[current.environment] !== undefined && (
                <div className="chips" role="group" aria-label="Show the transcript" style={{ marginBottom: "0.4rem" }}>
                  <button type="button" className="secondary small" aria-pressed={!onGraph} onClick={() => setOnGraph(false)} data-testid="transcript-as-messages">
                    Messages
                  </button>
                  <button type="button" className="secondary small" aria-pressed={onGraph} onClick={() => setOnGraph(true)} data-testid="transcript-on-graph">
                    On the round-spec graph
                  </button>
                </div>
              )}
              {onGraph && props.roundSpecs?.[current.environment] !== undefined ? (
                <TranscriptGraph key={current.seq} roundSpec={props.roundSpecs[current.environment]!} messages={current.messages} actors={actors} />
              ) : (
                <TranscriptView episode={current} actors={actors} group={groups.get(groupKey(current)) ?? null} />
              )}
            </>
          ) : (
            <p className="muted">{list.isPending ? "Loading…" : "No transcripts match."}</p>
          )}
        </div>
      </div>
    </section>
  );
}
