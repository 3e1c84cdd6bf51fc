"use client";

import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { errorMessage, fieldIssuesOf } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { CheckboxField, NumberField, SelectField, TextField } from "../../designer/components/fields";

const MAX_BYTES = 10 * 1024 * 1024;
type Mode = "upload" | "huggingface" | "local";
type Format = "jsonl" | "csv" | "parquet";

function formatOf(fileName: string): Format | null {
  const ext = fileName.toLowerCase().split(".").pop();
  return ext === "jsonl" || ext === "ndjson" ? "jsonl" : ext === "csv" ? "csv" : ext === "parquet" || ext === "pq" ? "parquet" : null;
}

function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error ?? new Error("could not read the file"));
    reader.readAsDataURL(file);
  });
}

/** A name the RunSpec accepts, from a file name: `gsm8k-train.jsonl` → `gsm8k-train`. */
function nameFromFile(fileName: string): string {
  const stem = fileName.replace(/\.[^.]+$/, "").replace(/[^A-Za-z0-9_.-]/g, "_");
  return /^[A-Za-z_]/.test(stem) ? stem.slice(0, 64) : `d_${stem}`.slice(0, 64);
}

/**
 * A new dataset: a file uploaded here (checked whole before anything is stored), a Hugging Face
 * dataset, or a file on the runner host (both read by the runner when a run starts).
 */
export function DatasetUploadForm({ onCreated }: { onCreated: (id: string) => void }) {
  const trpc = useTRPC();
  const [mode, setMode] = useState<Mode>("upload");
  const [name, setName] = useState<string | undefined>();
  const [file, setFile] = useState<File | null>(null);
  const [format, setFormat] = useState<Format>("jsonl");
  const [evalFraction, setEvalFraction] = useState<unknown>(undefined);
  const [hub, setHub] = useState<{ id?: string; config?: string; split?: string }>({});
  const [path, setPath] = useState<string | undefined>();
  const [localError, setLocalError] = useState<string | null>(null);
  const [withEval, setWithEval] = useState(false);

  const upload = useMutation(trpc.dataset.upload.mutationOptions({ onSuccess: (d) => onCreated(d.id) }));
  const reference = useMutation(trpc.dataset.createReference.mutationOptions({ onSuccess: (d) => onCreated(d.id) }));
  const error = upload.error ?? reference.error;
  const issues = Object.fromEntries(fieldIssuesOf(error).map((i) => [i.path, i.message]));
  const fileError = issues.file ?? issues.contentBase64 ?? localError;
  const otherError = error && Object.keys(issues).length === 0 ? errorMessage(error) : null;
  const fraction = withEval ? (typeof evalFraction === "number" ? evalFraction : 0.1) : 0;
  const busy = upload.isPending || reference.isPending;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setLocalError(null);
    upload.reset();
    reference.reset();
    if (mode === "upload") {
      if (!file) return setLocalError("choose a file first");
      if (file.size > MAX_BYTES) return setLocalError(`the file is ${(file.size / 1048576).toFixed(1)} MiB; the limit is 10 MiB`);
      upload.mutate({ name: name ?? nameFromFile(file.name), format, contentBase64: await readBase64(file), evalFraction: fraction });
    } else if (mode === "huggingface") {
      reference.mutate({ kind: "huggingface", name: name ?? "", id: hub.id ?? "", ...(hub.config ? { config: hub.config } : {}), split: hub.split ?? "train", evalFraction: fraction });
    } else {
      reference.mutate({ kind: "local", name: name ?? "", path: path ?? "", format, evalFraction: fraction });
    }
  }

  return (
    <form className="part-form" onSubmit={submit} noValidate aria-label="New dataset">
      <h2 style={{ margin: 0 }}>New dataset</h2>
      <fieldset>
        <legend>Where the rows come from</legend>
        <div className="form-actions" role="radiogroup" aria-label="Dataset source">
          {(
            [
              ["upload", "Upload a file"],
              ["huggingface", "Hugging Face dataset"],
              ["local", "File on the runner host"],
            ] as const
          ).map(([value, label]) => (
            <label key={value} className="small" style={{ display: "inline-flex", gap: "0.3rem", alignItems: "center" }}>
              <input type="radio" name="dataset-mode" value={value} checked={mode === value} onChange={() => setMode(value)} />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>{mode === "upload" ? "File" : mode === "huggingface" ? "Hub dataset" : "Runner file"}</legend>
        <div className="form-grid">
          {mode === "upload" ? (
            <div className="form-field">
              <label htmlFor="dataset-file">File (JSONL, CSV or Parquet; at most 10 MiB)</label>
              <input
                id="dataset-file"
                type="file"
                accept=".jsonl,.ndjson,.csv,.parquet,.pq"
                data-testid="dataset-file"
                aria-invalid={fileError ? true : undefined}
                onChange={(e) => {
                  const f = e.target.files?.[0] ?? null;
                  setFile(f);
                  if (f) setFormat(formatOf(f.name) ?? format);
                }}
              />
              <span className="hint">Checked whole before anything is stored; a bad row is named by its line.</span>
              {fileError ? (
                <span className="field-error" role="alert" data-testid="dataset-file-error">
                  {fileError}
                </span>
              ) : null}
            </div>
          ) : null}
          {mode === "huggingface" ? (
            <>
              <TextField label="Dataset id" hint="e.g. openai/gsm8k; read by the runner when a run starts." value={hub.id} onChange={(v) => setHub({ ...hub, id: v })} error={issues.id} />
              <TextField label="Config" hint="The subset name, when the dataset has several." value={hub.config} onChange={(v) => setHub({ ...hub, config: v })} error={issues.config} />
              <TextField label="Split" hint="The split to train on." value={hub.split} onChange={(v) => setHub({ ...hub, split: v })} placeholder="train" error={issues.split} />
            </>
          ) : null}
          {mode === "local" ? (
            <TextField label="Path" hint="Absolute path of a JSONL, CSV or Parquet file on the runner host." value={path} onChange={setPath} error={issues.path} />
          ) : null}
          {mode !== "huggingface" ? (
            <SelectField label="Format" hint="Taken from the file name; change it if the name misleads." value={format} options={["jsonl", "csv", "parquet"] as const} onChange={setFormat} testId="dataset-format" />
          ) : null}
          <TextField
            label="Name"
            hint="How environments refer to it (letters, digits, _ . -)."
            value={name}
            onChange={setName}
            placeholder={file && mode === "upload" ? nameFromFile(file.name) : undefined}
            error={issues.name}
            testId="dataset-name"
          />
        </div>
        <CheckboxField label="Hold out rows for evaluation" hint="a fixed random share of rows never trained on, scored every trainer.evalEvery steps." checked={withEval} onChange={setWithEval} />
        {withEval ? (
          <div className="form-grid">
            <NumberField label="Eval fraction" hint="Share of rows held out (0–1); the split is fixed by the run's seed." value={evalFraction} onChange={setEvalFraction} placeholder={0.1} error={issues.evalFraction} testId="dataset-eval-fraction" />
          </div>
        ) : null}
      </fieldset>
      {otherError ? (
        <p className="form-error" role="alert">
          {otherError}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" disabled={busy} data-testid="dataset-submit">
          {busy ? "Checking…" : mode === "upload" ? "Upload" : "Add dataset"}
        </button>
      </div>
    </form>
  );
}
