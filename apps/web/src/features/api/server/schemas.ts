import { IsoTimestamp } from "@troupe/contracts";
import { z } from "zod";
import { DATASET_FORMATS } from "../../datasets/server/parseDataset";

/**
 * The REST API's dataset upload schemas. Every other request and response of `/api/v1` is in
 * `@troupe/contracts` (`restApi.ts`), shared with the CLI; these stay here because the formats and
 * the size limit belong to the web app's dataset parser, which the designer's uploads use too.
 */

/** One limit for every upload path (defined with the shared parser). */
export { MAX_DATASET_BYTES } from "../../datasets/server/parseDataset";
export const DatasetFormat = z.enum(DATASET_FORMATS);
export const DatasetUploadQuery = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/, "must be 1-100 letters, digits, _ . - (not starting with . or -)")
      .describe("Dataset name"),
    format: DatasetFormat.optional().describe(
      "`jsonl`, `csv` or `parquet`; default: from Content-Type (`application/jsonl`, `application/x-ndjson`, `text/csv`, `application/vnd.apache.parquet`)",
    ),
  })
  .strict();
export const DatasetOut = z.object({
  id: z.string(),
  name: z.string(),
  format: DatasetFormat,
  byteSize: z.number().int(),
  rowCount: z.number().int(),
  columns: z.array(z.string()),
  sha256: z.string(),
  createdAt: IsoTimestamp,
});
export type DatasetOut = z.infer<typeof DatasetOut>;
