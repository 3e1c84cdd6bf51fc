import { formatMetric } from "../../../lib/format";
import { actorColour } from "../lib/specNames";
import type { EpisodeOut } from "../server/schemas";

/**
 * One episode: each turn in its actor's colour; the tokens an actor was trained on (its own
 * completions) are marked and tinted, the rest is context. Model output is untrusted: it is rendered
 * as React text nodes only (escaped), never as HTML.
 */
export function TranscriptView({ episode, actors }: { episode: EpisodeOut; actors: string[] }) {
  return (
    <article data-testid="transcript" data-seq={episode.seq}>
      <div className="chips" style={{ marginBottom: "0.4rem" }}>
        <span className="chip">step {episode.step}</span>
        <span className="chip">group {episode.group}</span>
        <span className="chip">sample {episode.sample}</span>
        <span className="chip">{episode.environment}</span>
        {episode.datasetRow !== null && <span className="chip">dataset row {episode.datasetRow}</span>}
        <span className="chip">
          reward <b>{formatMetric(episode.reward)}</b>
        </span>
        {episode.advantage !== null && <span className="chip">advantage {formatMetric(episode.advantage)}</span>}
        {Object.entries(episode.rewardComponents).map(([k, v]) => (
          <span className="chip" key={k}>
            {k} {formatMetric(v)}
          </span>
        ))}
      </div>
      {episode.messages.map((m, i) => (
        <div
          key={i}
          className={`turn${m.trained ? " trained" : ""}`}
          style={{ ["--actor" as string]: actorColour(actors, m.actor) }}
          data-testid="transcript-turn"
          data-actor={m.actor}
        >
          <div className="who">
            <b style={{ color: actorColour(actors, m.actor) }}>{m.actor}</b>
            <span>{m.role}</span>
            {m.trained ? <span className="tag-trained">trained</span> : <span>context</span>}
          </div>
          <pre>{m.content === "" ? "(empty)" : m.content}</pre>
        </div>
      ))}
    </article>
  );
}
