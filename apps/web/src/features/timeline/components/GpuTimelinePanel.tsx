"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { formatBytes } from "../../../lib/format";
import { useTRPC } from "../../../trpc/react";
import { actorColour } from "../../runs/lib/specNames";
import { slotLabel, type TimelineMove, type TimelineSlot } from "../lib/residencyTimeline";

/**
 * The GPU timeline on the run page: for a window of steps, one table per device whose columns are the
 * step's phases in order; each cell names the models resident on the device in that phase and the
 * offload/reload moves around it (bytes and seconds). Shown when the run has memory readings.
 */
export function GpuTimelinePanel({ runId, actors, live }: { runId: string; actors: string[]; live: boolean }) {
  const trpc = useTRPC();
  const [toStep, setToStep] = useState<number | undefined>(undefined);
  const timeline = useQuery(trpc.timeline.ofRun.queryOptions({ runId, ...(toStep !== undefined ? { toStep } : {}) }, { refetchInterval: live && toStep === undefined ? 5000 : false }));
  // Once more when the run ends, so its last steps are drawn.
  const { refetch } = timeline;
  useEffect(() => {
    if (!live) void refetch();
  }, [live, refetch]);
  const data = timeline.data;
  if (!data || data.steps.length === 0) return null;
  const first = data.steps[0]!.step;
  const last = data.steps.at(-1)!.step;
  const colour = (a: string) => actorColour([...new Set([...actors, ...data.actors])], a);
  return (
    <section className="panel gpu-timeline" data-testid="gpu-timeline">
      <div className="toolbar">
        <b>Device timeline</b>
        <span className="muted small">
          steps {first}–{last}: which model was resident on each device in each phase, and what moved
        </span>
        <button type="button" className="secondary" disabled={first <= 1} onClick={() => setToStep(Math.max(0, first - 1))} data-testid="timeline-earlier">
          ← earlier
        </button>
        <button type="button" className="secondary" disabled={toStep === undefined} onClick={() => setToStep(undefined)} data-testid="timeline-latest">
          latest
        </button>
      </div>
      {/* A device no model ever sat on and nothing moved to (host RSS readings on a GPU host) is left out. */}
      {data.devices.filter((d) => data.steps.some((s) => (s.devices[d] ?? []).some((x) => x.resident.length > 0 || x.moves.length > 0))).map((device) => {
        const labels = [...new Set(data.steps.flatMap((s) => (s.devices[device] ?? []).map(slotLabel)))];
        return (
          <table className="table small" key={device} data-testid="timeline-device" data-device={device}>
            <thead>
              <tr>
                <th>{device}</th>
                {labels.map((l) => (
                  <th key={l}>{l}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {data.steps.map((s) => {
                const slots = s.devices[device] ?? [];
                return (
                  <tr key={s.step} data-testid="timeline-step" data-step={s.step}>
                    <td className="num">step {s.step}</td>
                    {labels.map((l) => {
                      const slot = slots.find((x) => slotLabel(x) === l);
                      return <td key={l}>{slot ? <SlotCell slot={slot} colour={colour} /> : <span className="muted">—</span>}</td>;
                    })}
                  </tr>
                );
              })}
            </tbody>
          </table>
        );
      })}
    </section>
  );
}

function SlotCell({ slot, colour }: { slot: TimelineSlot; colour: (actor: string) => string }) {
  return (
    <div data-testid="timeline-slot" data-phase={slot.phase} data-resident={slot.resident.join(",")}>
      {slot.resident.length === 0 ? (
        <span className="muted">no model</span>
      ) : (
        slot.resident.map((a) => (
          <span key={a} className="chip" style={{ borderColor: colour(a), color: colour(a), marginRight: "0.25rem" }}>
            {a}
          </span>
        ))
      )}
      {slot.moves.map((m) => (
        <div key={m.seq} className="muted" data-testid="timeline-move" data-direction={m.direction} data-actor={m.actor}>
          {describeMove(m)}
        </div>
      ))}
    </div>
  );
}

export function describeMove(m: TimelineMove): string {
  const arrow = m.direction === "reload" ? "▲ reload" : "▼ offload";
  const parts = m.parts?.length ? ` ${m.parts.join("+")}` : "";
  return `${arrow} ${m.actor}${parts} ${formatBytes(m.bytes)} in ${m.seconds.toFixed(2)} s`;
}
