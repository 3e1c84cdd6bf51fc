"use client";

import {
  check,
  errorsToMarkers,
  format,
  fromGraph,
  GraphError,
  parse,
  ROUND_SPEC_LANGUAGE_ID,
  roundSpecLanguageConfiguration,
  roundSpecMonarch,
  sampleMany,
  stats,
} from "@troupe/dsl";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { CodeEditor, type CodeEditorMarker, type MonacoApi } from "../../../editor/CodeEditor";
import { emptyFlow, flowFromSpec, graphFromFlow, layoutTree } from "../../lib/roundSpecFlow";
import { RoundSpecGraph, type FlowState } from "./RoundSpecGraph";
import "./roundSpec.css";

function flowOf(text: string): FlowState | null {
  if (text.trim() === "") return emptyFlow();
  const parsed = parse(text);
  return parsed.ok ? flowFromSpec(parsed.ast) : null;
}

function registerRoundSpecLanguage(monaco: MonacoApi): void {
  if (monaco.languages.getLanguages().some((l) => l.id === ROUND_SPEC_LANGUAGE_ID)) return;
  monaco.languages.register({ id: ROUND_SPEC_LANGUAGE_ID });
  monaco.languages.setMonarchTokensProvider(ROUND_SPEC_LANGUAGE_ID, roundSpecMonarch as never);
  monaco.languages.setLanguageConfiguration(ROUND_SPEC_LANGUAGE_ID, roundSpecLanguageConfiguration);
}

/**
 * The round spec as text and as a graph, kept in sync through the dsl's graph form: editing the
 * text redraws the graph (while the text parses; a broken text keeps the last good drawing), and
 * every change to the drawing that makes a whole tree rewrites the text with `format`.
 */
export function RoundSpecEditor(props: { value: string; onChange(text: string): void; actors: string[]; maxTurns: number }) {
  const { value, onChange, actors, maxTurns } = props;
  const [flow, setFlow] = useState<FlowState>(() => flowOf(value) ?? emptyFlow());
  const [graphIssues, setGraphIssues] = useState<string[]>([]);
  const [seed, setSeed] = useState(0);
  const [fitKey, setFitKey] = useState(0);
  // The text we last produced or received, to tell our own round trip from a new value (another environment loaded).
  const lastText = useRef(value);

  useEffect(() => {
    if (value === lastText.current) return;
    lastText.current = value;
    const next = flowOf(value);
    if (next) {
      setFlow(next);
      setFitKey((k) => k + 1);
    }
  }, [value]);

  const onTextChange = useCallback(
    (text: string) => {
      // Our own text coming back from the editor (the graph wrote it): the drawing already says it.
      if (text === lastText.current) return;
      lastText.current = text;
      onChange(text);
      const next = flowOf(text);
      if (next) {
        setFlow(next);
        setGraphIssues([]);
        setFitKey((k) => k + 1);
      }
    },
    [onChange],
  );

  const onFlowChange = useCallback(
    (next: FlowState, structural: boolean) => {
      setFlow(next);
      if (!structural) return;
      try {
        const text = format(fromGraph(graphFromFlow(next.nodes, next.edges)));
        setGraphIssues([]);
        if (text !== lastText.current) {
          lastText.current = text;
          onChange(text);
        }
      } catch (error) {
        if (error instanceof GraphError) setGraphIssues(error.issues);
        else throw error;
      }
    },
    [onChange],
  );

  const checked = useMemo(() => (value.trim() === "" ? null : check(value, { actors, maxTurns })), [value, actors, maxTurns]);
  const markers: CodeEditorMarker[] = useMemo(
    () =>
      errorsToMarkers(checked?.errors ?? [], value).map((m) => ({
        line: m.startLineNumber,
        column: m.startColumn,
        endLine: m.endLineNumber,
        endColumn: m.endColumn,
        message: m.message,
      })),
    [checked, value],
  );
  const preview = useMemo(() => {
    if (!checked?.ast || checked.errors.length > 0 || actors.length === 0) return null;
    return {
      schedules: sampleMany(checked.ast, seed, 5, { actors, maxTurns }),
      stats: stats(checked.ast, { actors }),
    };
  }, [checked, seed, actors, maxTurns]);

  return (
    <div className="rs-editor">
      <div className="rs-panes">
        <div className="rs-text">
          <div className="label">Text</div>
          <CodeEditor
            value={value}
            onChange={onTextChange}
            language={ROUND_SPEC_LANGUAGE_ID}
            markers={markers}
            height={160}
            aria-label="Round spec text"
            onMount={(_, monaco) => registerRoundSpecLanguage(monaco)}
          />
          <ul className="rs-errors" data-testid="rs-errors" aria-live="polite">
            {(checked?.errors ?? []).map((e, i) => (
              <li key={i} className="field-error">
                line {e.line}, column {e.column}: {e.message}
              </li>
            ))}
          </ul>
          <p className="hint muted small">
            <code>A -&gt; B</code> in turn, <code>A:3 / B</code> one drawn by weight, <code>A &amp; B</code> same turn,{" "}
            <code>X*3</code> or <code>X*(1..4)</code> repeat, <code>*</code> any actor, <code># comment</code>.
          </p>
        </div>
        <div className="rs-graph">
          <div className="label">Graph</div>
          <RoundSpecGraph
            flow={flow}
            actors={actors}
            onChange={onFlowChange}
            fitKey={fitKey}
            onTidy={() => {
              // Lay out what is drawn (even half-drawn), not the text, so nothing drawn is lost.
              setFlow(layoutTree(graphFromFlow(flow.nodes, flow.edges)));
              setFitKey((k) => k + 1);
            }}
          />
          {graphIssues.length > 0 && (
            <ul className="rs-errors" data-testid="rs-graph-issues">
              {graphIssues.map((issue, i) => (
                <li key={i} className="draft-note">
                  {issue}
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>
      {preview && (
        <div className="rs-preview" data-testid="rs-preview">
          <div>
            <div className="label">
              Sampled schedules{" "}
              <button type="button" className="secondary small" onClick={() => setSeed((s) => s + 5)}>
                Sample again
              </button>
            </div>
            <ol className="rs-schedules">
              {preview.schedules.map((turns, i) => (
                <li key={i}>
                  {turns.map((t) => (t.length > 1 ? `(${t.join(" & ")})` : t[0])).join(" → ") || "(no turns)"}
                </li>
              ))}
            </ol>
          </div>
          <div>
            <div className="label">
              Turns per episode: {preview.stats.minTurns}–{preview.stats.maxTurns}, expected {preview.stats.expectedTurns.toFixed(2)}
            </div>
            <table className="table" data-testid="rs-stats">
              <thead>
                <tr>
                  <th>actor</th>
                  <th>min</th>
                  <th>expected</th>
                  <th>max</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(preview.stats.actors).map(([name, s]) => (
                  <tr key={name}>
                    <td>{name}</td>
                    <td>{s.minTurns}</td>
                    <td>{s.expectedTurns.toFixed(2)}</td>
                    <td>{s.maxTurns}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
    </div>
  );
}
