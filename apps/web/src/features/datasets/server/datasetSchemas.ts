import { DatasetSpec, Identifier } from "@troupe/contracts";
import { z } from "zod";
import { DATASET_FORMATS, MAX_DATASET_BYTES } from "./parseDataset";

export const DatasetKind = z.enum(["upload", "huggingface", "local"]);
export const DatasetFileFormat = z.enum(DATASET_FORMATS);
export const EvalFraction = z.number().min(0, "must be at least 0").lt(1, "must be below 1");

// base64 grows a file by 4/3; the check on the decoded bytes gives the exact message.
const MAX_BASE64_CHARS = Math.ceil(MAX_DATASET_BYTES / 3) * 4 + 16;

export const DatasetUploadInput = z
  .object({
    name: Identifier,
    format: DatasetFileFormat,
    /** The file, base64-encoded (tRPC bodies are JSON). */
    contentBase64: z.string().max(MAX_BASE64_CHARS, `the file is larger than ${MAX_DATASET_BYTES} bytes (10 MiB)`),
    description: z.string().max(2000).default(""),
    evalFraction: EvalFraction.default(0),
  })
  .strict();

/** A dataset that lives outside Troupe: a Hugging Face dataset or a file on the runner host. */
export const DatasetReferenceInput = z
  .discriminatedUnion("kind", [
    z
      .object({
        kind: z.literal("huggingface"),
        name: Identifier,
        id: z.string().trim().min(1, "is required"),
        config: z.string().trim().min(1).optional(),
        split: z.string().trim().min(1).default("train"),
        description: z.string().max(2000).default(""),
        evalFraction: EvalFraction.default(0),
      })
      .strict(),
    z
      .object({
        kind: z.literal("local"),
        name: Identifier,
        path: z.string().trim().min(1, "is required"),
        format: DatasetFileFormat,
        description: z.string().max(2000).default(""),
        evalFraction: EvalFraction.default(0),
      })
      .strict(),
  ]);

export const DatasetIdInput = z.object({ id: z.string().min(1) }).strict();
export const DatasetUpdateInput = z
  .object({
    id: z.string().min(1),
    name: Identifier.optional(),
    description: z.string().max(2000).optional(),
    evalFraction: EvalFraction.optional(),
  })
  .strict();
export const DatasetPreviewInput = z
  .object({ id: z.string().min(1), limit: z.number().int().min(1).max(200).default(20) })
  .strict();

export const DatasetSummary = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  kind: DatasetKind,
  format: z.string(),
  location: z.record(z.string(), z.unknown()).nullable(),
  byteSize: z.number().int(),
  rowCount: z.number().int(),
  columns: z.array(z.string()),
  columnTypes: z.record(z.string(), z.string()),
  evalFraction: z.number(),
  sha256: z.string().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
  /** The RunSpec `datasets[]` entry that uses this dataset (what the experiment composer inserts). */
  spec: DatasetSpec,
});
export type DatasetSummary = z.infer<typeof DatasetSummary>;

export const DatasetListOutput = z.object({ items: z.array(DatasetSummary) });
export const DatasetPreviewOutput = z.object({
  id: z.string(),
  columns: z.array(z.string()),
  columnTypes: z.record(z.string(), z.string()),
  rows: z.array(z.record(z.string(), z.unknown())),
  /** Why no rows can be shown (a Hugging Face or runner-host dataset is read by the runner, not here). */
  unavailable: z.string().nullable(),
});
export const DatasetDeleteOutput = z.object({ id: z.string(), deleted: z.literal(true) });
