import type { ApiFieldIssue } from "@troupe/contracts";
import type { Db } from "../../../server/db";
import { DatasetParseError, parseDataset as parseDatasetFile, type DatasetFormat, type ParsedDataset } from "../../datasets/server/parseDataset";
import { storeUploadedDataset } from "../../datasets/server/store";
import { ApiError } from "./problem";
import type { DatasetOut } from "./schemas";

/**
 * REST side of dataset uploads. Parsing and storing are shared with the designer
 * (features/datasets/server); this file only turns their errors into problem responses.
 */

export type { DatasetFormat, ParsedDataset };

/** Parses the whole file; the first malformed row becomes a 422 naming its line (or row). */
export async function parseDataset(format: DatasetFormat, bytes: Uint8Array): Promise<ParsedDataset> {
  try {
    return await parseDatasetFile(format, bytes);
  } catch (error) {
    if (error instanceof DatasetParseError) {
      const issue: ApiFieldIssue = { path: "(body)", message: error.reason, ...(error.line !== undefined ? { line: error.line } : {}) };
      if (error.row !== undefined) issue.message = `row ${error.row}: ${error.reason}`;
      throw ApiError.validation([issue], "invalid dataset");
    }
    throw error;
  }
}

const FORMAT_BY_MEDIA_TYPE: Record<string, DatasetFormat> = {
  "application/jsonl": "jsonl",
  "application/x-jsonlines": "jsonl",
  "application/x-ndjson": "jsonl",
  "application/ndjson": "jsonl",
  "text/csv": "csv",
  "application/vnd.apache.parquet": "parquet",
};

export function formatFromMediaType(type: string | null): DatasetFormat | null {
  return type ? (FORMAT_BY_MEDIA_TYPE[type] ?? null) : null;
}

/** The designer refuses a second dataset of one name (RunSpec identifiers); so does the API, before reading the body. */
export async function assertDatasetNameFree(db: Db, name: string): Promise<void> {
  const clash = await db.dataset.findFirst({ where: { name }, select: { id: true } });
  if (clash) {
    const message = `a dataset named "${name}" already exists (id ${clash.id}): choose another name`;
    throw new ApiError(409, "conflict", message, [{ path: "name", message }]);
  }
}

export async function storeDataset(
  db: Db,
  args: { name: string; format: DatasetFormat; bytes: Uint8Array; parsed: ParsedDataset },
): Promise<DatasetOut> {
  const row = await storeUploadedDataset(db, args);
  return { ...row, sha256: row.sha256 ?? "", format: args.format, columns: args.parsed.columns, createdAt: row.createdAt.toISOString() };
}
