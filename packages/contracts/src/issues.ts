import type { z } from "zod";

/** One validation problem, tied to the field it concerns (dotted path, e.g. `actors.0.training.learningRate`). */
export interface FieldIssue {
  path: string;
  message: string;
}

export function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "(root)" : path.map((p) => String(p)).join(".");
}

export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
}

/** "actors.0.name: must start with a letter…; trainer.steps: …" — for logs and one-line errors. */
export function describeIssues(error: z.ZodError): string {
  return fieldIssues(error)
    .map((i) => `${i.path}: ${i.message}`)
    .join("; ");
}
