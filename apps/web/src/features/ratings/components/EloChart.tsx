"use client";

import { Area, CartesianGrid, ComposedChart, Legend, Line, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { ChartFrame } from "../../runs/components/charts/ChartFrame";
import { actorColour } from "../../runs/lib/specNames";
import { ELO_ANCHOR_NAME, eloChartRows, latestRatings, type EloPool } from "../lib/eloRatings";

const round = (v: number) => Math.round(v).toString();

/**
 * One game environment's Elo per checkpoint: a line per actor with its 95% interval as a band, and the fixed
 * opponents as horizontal lines (the random player, the anchor, at 1000). Recharts: a small declarative chart.
 */
export function EloChart({ pool, actors }: { pool: EloPool; actors: readonly string[] }) {
  const rows = eloChartRows(pool);
  const latest = latestRatings(pool);
  const title = pool.environment ? `Elo per checkpoint · ${pool.environment}` : "Elo per checkpoint";
  return (
    <ChartFrame testId={pool.environment ? `elo-chart-${pool.environment}` : "elo-chart"} title={title} note="Bradley-Terry fit, random player = 1000" points={pool.points.length} emptyText="No checkpoint has been rated yet.">
      <div style={{ width: "100%", height: 260 }} data-testid="elo-plot">
        <ResponsiveContainer>
          <ComposedChart data={rows} margin={{ top: 8, right: 96, bottom: 8, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="step" type="number" domain={["dataMin", "dataMax"]} allowDecimals={false} fontSize={12} label={{ value: "step", position: "insideBottomRight", offset: -4, fontSize: 12 }} />
            <YAxis fontSize={12} width={56} domain={["auto", "auto"]} tickFormatter={round} />
            <Tooltip formatter={(v) => (Array.isArray(v) ? `${round(v[0] as number)}–${round(v[1] as number)}` : round(Number(v)))} />
            <Legend />
            {pool.opponents.map((o) => (
              <ReferenceLine
                key={o.name}
                y={o.rating}
                stroke={o.name === ELO_ANCHOR_NAME ? "#57606a" : "#bf8700"}
                strokeDasharray={o.name === ELO_ANCHOR_NAME ? "6 3" : "2 3"}
                label={{ value: `${o.name} ${round(o.rating)}`, position: "right", fontSize: 11 }}
                ifOverflow="extendDomain"
              />
            ))}
            {pool.actors.map((a) => (
              <Area key={`${a}:ci`} dataKey={`${a}:ci`} name={`${a} 95% CI`} stroke="none" fill={actorColour(actors, a)} fillOpacity={0.15} legendType="none" isAnimationActive={false} />
            ))}
            {pool.actors.map((a) => (
              <Line key={a} dataKey={a} name={a} stroke={actorColour(actors, a)} strokeWidth={2} dot isAnimationActive={false} connectNulls />
            ))}
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      <ul className="muted small" data-testid="elo-latest" style={{ margin: "0.25rem 0 0", paddingLeft: "1rem" }}>
        {latest.map((p) => (
          <li key={p.actor} data-testid="elo-latest-actor" data-actor={p.actor}>
            <b>{p.actor}</b> {round(p.rating)} ± {round(p.ci95)} at step {p.step} ({p.games} games)
          </li>
        ))}
        <li>
          Fixed opponents: {pool.opponents.map((o) => `${o.name} ${round(o.rating)}`).join(", ")} (the random player is the anchor, 1000)
        </li>
      </ul>
    </ChartFrame>
  );
}
