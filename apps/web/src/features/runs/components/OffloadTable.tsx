"use client";

import { formatBytes } from "../../../lib/format";
import { actorColour } from "../lib/specNames";
import type { OffloadTotal } from "../server/offloads";

/**
 * "Offloads": per actor and direction, how many moves, how many bytes and how long they took, and the
 * rate that makes (a slow rate says host memory is not pinned, or the link is shared).
 */
export function OffloadTable({ totals, actors }: { totals: readonly OffloadTotal[]; actors: readonly string[] }) {
  return (
    <section className="panel" data-testid="offloads">
      <h2>Offloads</h2>
      <p className="muted small">
        Training state moved between the device and host memory, per actor: <b>▼ offload</b> device → host, <b>▲ reload</b> host → device. Each move is
        marked above the memory charts; hover a mark for its bytes and seconds.
      </p>
      {totals.length === 0 ? (
        <p className="muted small">No offloads in this run (between-phase offload is off, or one model per device).</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th>Actor</th>
              <th>Direction</th>
              <th className="num">Count</th>
              <th className="num">Total bytes</th>
              <th className="num">Total seconds</th>
              <th className="num">Rate</th>
              <th className="num">Steps</th>
            </tr>
          </thead>
          <tbody>
            {totals.map((t) => (
              <tr key={`${t.actor}|${t.direction}`} data-testid={`offloads-${t.actor}-${t.direction}`}>
                <td>
                  <span className="run-swatch" style={{ background: actorColour(actors, t.actor) }} />
                  {t.actor}
                </td>
                <td>{t.direction === "offload" ? "▼ offload" : "▲ reload"}</td>
                <td className="num">{t.count}</td>
                <td className="num">{formatBytes(t.bytes)}</td>
                <td className="num">{t.seconds.toFixed(3)}</td>
                <td className="num">{t.seconds > 0 ? `${formatBytes(t.bytes / t.seconds)}/s` : "—"}</td>
                <td className="num">
                  {t.firstStep}–{t.lastStep}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
