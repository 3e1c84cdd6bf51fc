import { describeIssues, RunSpec } from "@troupe/contracts";
import type { ExperimentSpecSummary } from "./schemas";

function modelLabel(model: RunSpec["actors"][number]["model"]): string {
  switch (model.source) {
    case "tiny":
      return `tiny:${model.preset}`;
    case "huggingface":
      return model.revision ? `${model.id}@${model.revision}` : model.id;
    case "local":
      return model.path;
    case "run":
      return `run ${model.runId} step ${model.step}${model.actor ? ` (${model.actor})` : ""}`;
  }
}

/** Summarise a stored spec for a card, or say why it does not validate. */
export function summarizeSpec(spec: unknown): { summary: ExperimentSpecSummary | null; specError: string | null } {
  const parsed = RunSpec.safeParse(spec);
  if (!parsed.success) return { summary: null, specError: describeIssues(parsed.error) };
  const s = parsed.data;
  return {
    specError: null,
    summary: {
      actors: s.actors.map((a) => ({ name: a.name, model: modelLabel(a.model), backend: a.backend, trainable: a.trainable })),
      environments: s.environments.map((e) => ({
        name: e.name,
        kind: e.kind,
        actors: e.actors,
        roundSpec: e.roundSpec ?? null,
      })),
      algorithm: s.algorithm.name,
      groupSize: s.algorithm.groupSize,
      steps: s.trainer.steps,
      seed: s.seed,
      device: s.trainer.device,
    },
  };
}
