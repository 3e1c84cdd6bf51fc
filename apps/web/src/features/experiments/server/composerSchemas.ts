import { z } from "zod";

/** A draft RunSpec as the composer holds it: any JSON object (validated live and at launch, not on save). */
export const DraftSpec = z.record(z.string(), z.unknown());

export const ExperimentCreateInput = z.object({ spec: DraftSpec }).strict();
export const ExperimentSaveInput = z.object({ id: z.string().min(1), spec: DraftSpec }).strict();
export const ExperimentFromRunInput = z.object({ runId: z.string().min(1) }).strict();
export const ExperimentIdOutput = z.object({ id: z.string() });
export const ExperimentSaveOutput = z.object({ id: z.string(), updatedAt: z.date() });

export const SpecTextFormat = z.enum(["yaml", "json"]);
export type SpecTextFormat = z.infer<typeof SpecTextFormat>;
export const ImportSpecInput = z.object({ text: z.string().max(2_000_000), format: SpecTextFormat }).strict();

export const LocatedIssue = z.object({
  path: z.string(),
  message: z.string(),
  line: z.number().int().optional(),
  column: z.number().int().optional(),
});
export const ImportedSpec = z.object({
  /** The parsed document (an object), valid or not. */
  spec: DraftSpec,
  /** RunSpec problems, each with the line and column of its value in the text. */
  issues: z.array(LocatedIssue),
});
export type ImportedSpec = z.infer<typeof ImportedSpec>;
