import { formatMetric } from "../../../lib/format";
import { speakerLabel } from "../lib/conversationShape";
import { actorColour } from "../lib/specNames";
import type { TranscriptGroup } from "../lib/transcriptGroups";
import type { EpisodeOut } from "../server/schemas";
import { GroupSamplesTable } from "./TranscriptGroupHeader";

/**
 * One episode: each turn in its actor's colour; the tokens an actor was trained on (its own
 * completions) are marked and tinted, the rest is context. Model output is untrusted: it is rendered
 * as React text nodes only (escaped), never as HTML. The prompt is labelled by its role (`user`), with
 * the dataset it came from beside it; with `group`, every sample of the episode's GRPO group is listed.
 */
export function TranscriptView({ episode, actors, group }: { episode: EpisodeOut; actors: string[]; group?: TranscriptGroup | null }) {
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
      {group && <GroupSamplesTable group={group} selectedSeq={episode.seq} />}
      {episode.messages.map((m, i) => {
        const label = speakerLabel(m);
        // The prompt is nobody's turn: neutral colour, named by its role.
        const colour = m.role === "user" ? "#64748b" : actorColour(actors, m.actor);
        return (
          <div
            key={i}
            className={`turn${m.trained ? " trained" : ""}`}
            style={{ ["--actor" as string]: colour }}
            data-testid="transcript-turn"
            data-actor={m.actor}
            data-role={m.role}
          >
            <div className="who">
              <b style={{ color: colour }} data-testid="turn-speaker">
                {label.name}
              </b>
              {m.role === "user" ? (
                <span data-testid="turn-source">prompt{label.source !== null && <> · dataset {label.source}</>}</span>
              ) : (
                <span>{m.role}</span>
              )}
              {m.trained ? <span className="tag-trained">trained</span> : <span>context</span>}
              {m.turn !== undefined && <span data-testid="turn-index">turn {m.turn}</span>}
              {m.reward !== undefined && <span data-testid="turn-reward">reward {formatMetric(m.reward)}</span>}
              {m.advantage !== undefined && <span data-testid="turn-advantage">adv {formatMetric(m.advantage)}</span>}
            </div>
            <pre>{m.content === "" ? "(empty)" : m.content}</pre>
          </div>
        );
      })}
    </article>
  );
}
