"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { errorMessage, fieldIssuesOf } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { refetchAfterWrite } from "../../../trpc/refetch";

type Field = "steps" | "seed" | "priority" | "gpus";

/** Which input a server-reported field path belongs to (spec paths and input paths both map). */
function fieldOf(path: string): Field | null {
  if (path === "trainer.steps" || path === "overrides.steps") return "steps";
  if (path === "seed" || path === "overrides.seed") return "seed";
  if (path === "priority") return "priority";
  if (path === "gpus") return "gpus";
  return null;
}

/** "" → undefined (keep the experiment's value); anything else goes to the server, which validates it. */
function numberOrUndefined(raw: string): number | undefined {
  const trimmed = raw.trim();
  return trimmed === "" ? undefined : Number(trimmed);
}

export function LaunchForm(props: {
  experimentId: string;
  defaultSteps: number | null;
  defaultSeed: number | null;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [steps, setSteps] = useState("");
  const [seed, setSeed] = useState("");
  const [priority, setPriority] = useState("0");
  const [gpus, setGpus] = useState("");

  const launch = useMutation(
    trpc.experiment.launch.mutationOptions({
      onSuccess: async ({ runId }) => {
        await refetchAfterWrite(queryClient, { queryKey: trpc.run.list.pathKey() });
        router.push(`/runs/${runId}`);
      },
    }),
  );

  const issues = fieldIssuesOf(launch.error);
  const byField = new Map<Field, string>();
  const other: string[] = [];
  for (const issue of issues) {
    const field = fieldOf(issue.path);
    if (field && !byField.has(field)) byField.set(field, issue.message);
    else if (!field) other.push(`${issue.path}: ${issue.message}`);
  }
  const generalError = launch.error && issues.length === 0 ? errorMessage(launch.error) : other.join("; ");

  function submit(e: FormEvent) {
    e.preventDefault();
    const overrides = { steps: numberOrUndefined(steps), seed: numberOrUndefined(seed) };
    const p = numberOrUndefined(priority) ?? 0;
    const g = numberOrUndefined(gpus);
    launch.mutate({ experimentId: props.experimentId, overrides, priority: p, ...(g === undefined ? {} : { gpus: g }) });
  }

  const input = (field: Field, label: string, value: string, set: (v: string) => void, placeholder: string) => {
    const id = `${props.experimentId}-${field}`;
    const error = byField.get(field);
    return (
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input
          id={id}
          type="number"
          inputMode="numeric"
          value={value}
          placeholder={placeholder}
          onChange={(e) => set(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
          data-testid={`launch-${field}`}
        />
        {error && (
          <span className="field-error" id={`${id}-error`} data-testid={`launch-${field}-error`}>
            {error}
          </span>
        )}
      </div>
    );
  };

  return (
    <form className="form" onSubmit={submit} noValidate data-testid="launch-form">
      <div className="form-row form-row-2">
        {input("steps", "Steps", steps, setSteps, props.defaultSteps === null ? "" : String(props.defaultSteps))}
        {input("seed", "Seed", seed, setSeed, props.defaultSeed === null ? "" : String(props.defaultSeed))}
        {input("priority", "Priority (0–100)", priority, setPriority, "0")}
        {/* Empty: the GPUs its actors are placed on, as the composer's launch does. */}
        {input("gpus", "GPUs", gpus, setGpus, "from placement")}
      </div>
      {generalError && (
        <div className="form-error" role="alert" data-testid="launch-error">
          {generalError}
        </div>
      )}
      <div className="card-actions">
        <button type="submit" disabled={launch.isPending} data-testid="launch-submit">
          {launch.isPending ? "Launching…" : "Launch run"}
        </button>
        <button type="button" className="secondary" onClick={props.onCancel}>
          Close
        </button>
      </div>
    </form>
  );
}
