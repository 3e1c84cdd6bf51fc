"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { errorMessage, fieldIssuesOf } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { tracebackLine, userTraceback } from "./rewardTemplates";

export interface TestMarker {
  line: number;
  message: string;
}

function seconds(s: number): string {
  if (s < 0.001) return `${Math.round(s * 1e6)} µs`;
  return s < 1 ? `${(s * 1000).toFixed(1)} ms` : `${s.toFixed(2)} s`;
}

/**
 * The Test button: N sample rows of the chosen dataset (or a typed row when there is none), a
 * completion typed for each, and per call the score or the traceback and the time taken. The
 * function runs on a runner, out of process, exactly as in training.
 */
export function RewardTestPanel({
  reward,
  rewardValid,
  scope,
  datasetId,
  onDatasetChange,
  onMarkers,
}: {
  reward: Record<string, unknown>;
  rewardValid: boolean;
  scope: "completion" | "conversation";
  datasetId: string | null;
  onDatasetChange: (id: string | null) => void;
  onMarkers: (markers: TestMarker[]) => void;
}) {
  const trpc = useTRPC();
  const datasets = useQuery(trpc.dataset.list.queryOptions());
  const uploads = (datasets.data?.items ?? []).filter((d) => d.kind === "upload");
  const preview = useQuery({ ...trpc.dataset.preview.queryOptions({ id: datasetId ?? "", limit: 20 }), enabled: datasetId !== null });
  const [count, setCount] = useState(3);
  const [promptField, setPromptField] = useState("prompt");
  const [actorName, setActorName] = useState("assistant");
  const [completions, setCompletions] = useState<string[]>([]);
  const [manualRow, setManualRow] = useState('{"prompt": "say a:", "answer": "a"}');
  const test = useMutation(trpc.reward.test.mutationOptions());

  const manualParsed = (() => {
    try {
      const v = JSON.parse(manualRow) as unknown;
      return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  })();
  const rows: Record<string, unknown>[] = datasetId ? (preview.data?.rows ?? []).slice(0, count) : manualParsed ? [manualParsed] : [];

  useEffect(() => {
    // Markers follow the latest result: the last traceback line of each failed call.
    const markers = (test.data?.results ?? []).flatMap((r) => {
      const at = r.error ? tracebackLine(r.error) : null;
      return at ? [at] : [];
    });
    onMarkers(markers);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [test.data]);

  const run = () =>
    test.mutate({
      reward,
      promptField,
      actorName,
      samples: rows.map((row, i) => ({ row, completion: completions[i] ?? "" })),
    });
  const issueText = fieldIssuesOf(test.error).map((i) => `${i.path}: ${i.message}`).join("; ");

  return (
    <fieldset className="reward-test" aria-label="Test the reward">
      <legend>Test</legend>
      <div className="form-grid">
        <div className="form-field">
          <label htmlFor="reward-test-dataset">Sample rows from</label>
          <select id="reward-test-dataset" value={datasetId ?? ""} onChange={(e) => onDatasetChange(e.target.value || null)} data-testid="reward-test-dataset">
            <option value="">(a row I type)</option>
            {uploads.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name} ({d.rowCount} rows)
              </option>
            ))}
          </select>
          <span className="hint">Uploaded datasets; their columns are passed as keyword arguments.</span>
        </div>
        {datasetId ? (
          <div className="form-field">
            <label htmlFor="reward-test-count">Rows (N)</label>
            <input id="reward-test-count" type="number" min={1} max={20} value={count} onChange={(e) => setCount(Math.max(1, Math.min(20, Number(e.target.value) || 1)))} />
            <span className="hint">The first N rows (1–20).</span>
          </div>
        ) : null}
        <div className="form-field">
          <label htmlFor="reward-test-prompt-field">Prompt column</label>
          <input id="reward-test-prompt-field" type="text" value={promptField} onChange={(e) => setPromptField(e.target.value)} />
          <span className="hint">The column the environment uses as the prompt.</span>
        </div>
        {scope === "conversation" ? (
          <div className="form-field">
            <label htmlFor="reward-test-actor">Actor name</label>
            <input id="reward-test-actor" type="text" value={actorName} onChange={(e) => setActorName(e.target.value)} />
            <span className="hint">The actor whose reply each completion is.</span>
          </div>
        ) : null}
      </div>
      {!datasetId ? (
        <div className="form-field">
          <label htmlFor="reward-test-row">Row (JSON object)</label>
          <textarea id="reward-test-row" rows={2} value={manualRow} onChange={(e) => setManualRow(e.target.value)} aria-invalid={manualParsed ? undefined : true} />
          {!manualParsed ? <span className="field-error">not a JSON object</span> : null}
        </div>
      ) : null}

      <table className="table test-results" data-testid="reward-test-table">
        <thead>
          <tr>
            <th>#</th>
            <th>Prompt</th>
            <th>Completion to score</th>
            <th>Score</th>
            <th>Time</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => {
            const result = test.data?.results[i];
            return (
              <tr key={i} data-testid="reward-test-row">
                <td className="num">{i + 1}</td>
                <td>
                  <code>{String(row[promptField] ?? "")}</code>
                </td>
                <td>
                  <input
                    type="text"
                    aria-label={`Completion ${i + 1}`}
                    value={completions[i] ?? ""}
                    onChange={(e) => setCompletions((c) => Object.assign([...c], { [i]: e.target.value }))}
                    data-testid={`reward-test-completion-${i}`}
                    style={{ width: "100%" }}
                  />
                  {result?.error ? (
                    <pre className="traceback" data-testid={`reward-test-error-${i}`}>
                      {userTraceback(result.error)}
                    </pre>
                  ) : null}
                </td>
                <td className="num score" data-testid={`reward-test-score-${i}`}>
                  {result ? (result.score !== null ? result.score : <span className="field-error">error</span>) : ""}
                </td>
                <td className="num">{result ? seconds(result.seconds) : ""}</td>
              </tr>
            );
          })}
        </tbody>
      </table>

      <div className="form-actions">
        <button type="button" onClick={run} disabled={test.isPending || rows.length === 0 || !rewardValid} data-testid="reward-test-run">
          {test.isPending ? "Running on a runner…" : `Test on ${rows.length} row${rows.length === 1 ? "" : "s"}`}
        </button>
        {!rewardValid ? <span className="muted small">Fix the reward's fields first.</span> : null}
        {test.data ? (
          <span className="form-status" data-testid="reward-test-summary">
            {test.data.results.filter((r) => r.score !== null).length}/{test.data.results.length} scored · {seconds(test.data.seconds)} on {test.data.runnerId} ·{" "}
            {seconds(test.data.roundTripSeconds)} round trip
          </span>
        ) : null}
      </div>
      {test.error ? (
        <p className="form-error" role="alert" data-testid="reward-test-failure">
          {issueText || errorMessage(test.error)}
        </p>
      ) : null}
    </fieldset>
  );
}
